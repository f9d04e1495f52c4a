package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/internal/ptytest"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// BenchmarkProcessDemoFirstFrame measures `guildhall demo` from exec to its
// first frame of the console, on a pseudo-terminal of 100x30 that answers
// the queries a real terminal answers (background colour, cursor position,
// device attributes): without answers the program waits for each query's
// timeout instead. It reports the wall time, the CPU the process had used
// then, and its peak RSS then.
func BenchmarkProcessDemoFirstFrame(b *testing.B) {
	bin := buildBinary(b)
	var wall, cpu time.Duration
	var rss int64
	for i := 0; i < b.N; i++ {
		w, c, r := demoFirstFrame(b, bin)
		wall += w
		cpu += c
		rss = max(rss, r)
	}
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "wall-ms/frame")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/frame")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
}

// firstFrameMark is text of the console's first frame: its header's first
// words, which Bubble Tea writes with the rest of the first View.
const firstFrameMark = " Guildhall ["

// startOnTerminal starts bin on a new 100x30 pseudo-terminal that is its
// controlling terminal, as an operator's terminal would run it, and
// returns the terminal's master side, the process, when it started, and
// stop, which kills it and closes the terminal.
func startOnTerminal(b *testing.B, bin string, args ...string) (*os.File, *exec.Cmd, time.Time, func()) {
	b.Helper()
	master, slave := ptytest.Open(b)
	if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100}); err != nil {
		b.Fatal(err)
	}
	tty, err := os.OpenFile(slave, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tty.Close()
		b.Fatal(err)
	}
	return master, cmd, start, func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		tty.Close()
	}
}

func demoFirstFrame(b *testing.B, bin string) (wall, cpu time.Duration, rss int64) {
	master, cmd, start, stop := startOnTerminal(b, bin, "demo", "--speed", "0", "--into", filepath.Join(b.TempDir(), "ws"))
	defer stop()
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	var seen []byte
	buf := make([]byte, 64<<10)
	deadline := start.Add(10 * time.Second)
	for time.Now().Before(deadline) {
		_ = master.SetReadDeadline(deadline)
		n, err := master.Read(buf)
		if err != nil {
			b.Fatalf("reading the terminal: %v\n%q", err, seen[max(0, len(seen)-2000):])
		}
		seen = append(seen, buf[:n]...)
		answerQueries(master, buf[:n])
		if bytes.Contains(seen, []byte(firstFrameMark)) {
			wall = time.Since(start)
			cpu = procCPU(b, proc)
			rss, _ = highWaterRSS(proc + "/status")
			return wall, cpu, rss
		}
	}
	b.Fatalf("no first frame within 10 s:\n%q", seen[max(0, len(seen)-2000):])
	return
}

// answerQueries replies as xterm would to the queries in out.
func answerQueries(master *os.File, out []byte) {
	for _, q := range []struct{ query, reply string }{
		{"\x1b]11;?", "\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\"}, // background colour
		{"\x1b]10;?", "\x1b]10;rgb:dddd/dddd/dddd\x1b\\"}, // foreground colour
		{"\x1b[6n", "\x1b[1;1R"},                          // cursor position
		{"\x1b[c", "\x1b[?62;22c"},                        // primary device attributes
		{"\x1b[?u", "\x1b[?0u"},                           // keyboard enhancements
	} {
		for range bytes.Count(out, []byte(q.query)) {
			_, _ = master.WriteString(q.reply)
		}
	}
}

// procCPU is the user+system CPU a live process has used (clock ticks of
// 10 ms, so a figure per frame is an average over many runs).
func procCPU(b *testing.B, proc string) time.Duration {
	raw, err := os.ReadFile(proc + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	i := bytes.LastIndexByte(raw, ')')
	f := strings.Fields(string(raw[i+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// BenchmarkProcessResume100MB measures `guildhall resume` of a run whose
// event log is 100 MB: the demo killed (SIGKILL) early, its log then grown
// with tool calls and results of 4 KiB until it passes 100 MB. Each
// iteration resumes a fresh copy to the end of the run and reports its CPU,
// wall time and peak RSS: reading the backlog, counting the log's lines to
// append after them, and the rest of the run.
func BenchmarkProcessResume100MB(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 100 MB and runs the binary")
	}
	bin := buildBinary(b)
	g := grownDemo(b, bin)
	dir, id, logPath, size := g.dir, g.id, g.logPath, g.size
	var cpu, wall, replayWall, replayCPU time.Duration
	var rss, replayRSS int64
	for i := 0; i < b.N; i++ {
		g.restore(b)
		argv := []string{bin, "resume", "--workspace", dir, "--provider", "script", "--no-input", id}
		if w := os.Getenv("GUILDHALL_BENCH_WRAP"); w != "" {
			argv = append(strings.Fields(strings.ReplaceAll(w, "%d", strconv.Itoa(i))), argv...)
		}
		ph := &firstGrowth{path: logPath, size: size}
		m, out, err := measureWith(exec.Command(argv[0], argv[1:]...), ph.poll)
		if err != nil {
			b.Fatalf("resume: %v\n%s", err, out[max(0, len(out)-2000):])
		}
		if meta, err := (store.Workspace{Dir: dir}).ReadMeta(id); err != nil || meta.Status != store.StatusSuccess {
			b.Fatalf("the resumed run did not finish: %+v %v", meta, err)
		}
		if !ph.seen {
			b.Fatal("the resumed run never appended to its log")
		}
		cpu += m.cpu
		wall += m.wall
		rss = max(rss, m.peakRSS)
		replayWall += ph.wall
		replayCPU += ph.cpu
		replayRSS = max(replayRSS, ph.rss)
	}
	n := float64(b.N)
	b.ReportMetric(float64(size)/(1<<20), "log-MiB")
	b.ReportMetric(float64(cpu.Milliseconds())/n, "cpu-ms/run")
	b.ReportMetric(float64(wall.Milliseconds())/n, "wall-ms/run")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
	b.ReportMetric(float64(replayWall.Milliseconds())/n, "replay-wall-ms")
	b.ReportMetric(float64(replayCPU.Milliseconds())/n, "replay-cpu-ms")
	b.ReportMetric(float64(replayRSS)/1024, "replay-peak-rss-MiB")
	b.ReportMetric(float64((wall-replayWall).Milliseconds())/n, "rest-wall-ms")
}

// firstGrowth notes when a resumed run first appends to its log (its
// run_resumed event): everything before is start-up and replay of the
// backlog, everything after the rest of the run.
type firstGrowth struct {
	path string
	size int64
	seen bool
	wall time.Duration
	cpu  time.Duration // clock ticks of 10 ms, from /proc/PID/stat
	rss  int64         // KiB
}

func (g *firstGrowth) poll(proc string, since time.Duration) {
	if g.seen {
		return
	}
	fi, err := os.Stat(g.path)
	if err != nil || fi.Size() <= g.size {
		return
	}
	g.seen, g.wall = true, since
	if raw, err := os.ReadFile(proc + "/stat"); err == nil {
		if i := bytes.LastIndexByte(raw, ')'); i >= 0 {
			if f := strings.Fields(string(raw[i+1:])); len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				g.cpu = time.Duration(ut+st) * 10 * time.Millisecond
			}
		}
	}
	g.rss, _ = highWaterRSS(proc + "/status")
}

// grownRun is a demo run killed early whose log was grown to 100 MB, kept
// aside at base. The records are sealed for the workspace's path, so each
// iteration resumes a copy put back at dir, the path the run was recorded
// at (restore).
type grownRun struct {
	dir, base, id, logPath string
	size                   int64
}

func grownDemo(b *testing.B, bin string) grownRun {
	dir, id := killedDemo(b, bin, 12)
	logPath, err := store.Workspace{Dir: dir}.LogPath(id)
	if err != nil {
		b.Fatal(err)
	}
	size := growLog(b, logPath, 100<<20)
	base := filepath.Join(b.TempDir(), "base")
	if err := os.Rename(dir, base); err != nil {
		b.Fatal(err)
	}
	return grownRun{dir: dir, base: base, id: id, logPath: logPath, size: size}
}

// restore puts a fresh copy of the grown run back at its path.
func (g grownRun) restore(b *testing.B) {
	_ = os.RemoveAll(g.dir)
	if out, err := exec.Command("cp", "-a", g.base, g.dir).CombinedOutput(); err != nil {
		b.Fatalf("copy: %v\n%s", err, out)
	}
}

// killedDemo runs the headless demo into a new workspace and kills it once
// its log has at lines, returning the workspace and the run's id.
func killedDemo(tb testing.TB, bin string, at int) (string, string) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "ws")
	cmd := exec.Command(bin, "demo", "--headless", "--speed", "0.1", "--no-input", "--into", dir)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for logLines(dir) < at && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	ids, err := store.Workspace{Dir: dir}.ListRunIDs()
	if err != nil || len(ids) != 1 {
		tb.Fatalf("the demo killed at log line %d recorded %d runs: %v", at, len(ids), err)
	}
	return dir, ids[0]
}

// growLog drops a torn last line, then appends pairs of tool_call and
// tool_result events of the orchestrator until the log reaches size bytes,
// and returns its size.
func growLog(b *testing.B, path string, size int64) int64 {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	raw = raw[:bytes.LastIndexByte(raw, '\n')+1]
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	_, _ = w.Write(raw)
	written := int64(len(raw))
	result, _ := json.Marshal(map[string]string{"kind": "success", "data": strings.Repeat("lorem ipsum dolor sit amet ", 150)})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; written < size; n++ {
		id := "pad-" + strconv.Itoa(n)
		for _, e := range []struct {
			typ event.Type
			p   any
		}{
			{event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: id, Arguments: `{"path":"README.md"}`}},
			{event.ToolResult, event.ToolResultPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: id, Kind: "success", Result: result, ElapsedMs: 1}},
		} {
			line := logLine(b, t0.Add(time.Duration(n)*time.Millisecond), e.typ, e.p)
			_, _ = w.Write(line)
			written += int64(len(line))
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return written
}

// BenchmarkProcessVersusCrush runs crush, when its binary is on PATH, on the
// workload of BenchmarkProcess100ToolTurns (50 file reads and 50 shell
// echoes, instant model replies from the same fake server), beside Guildhall
// in the same loop, and reports both figures and their ratio. crush reads
// its provider from a crush.json in the workspace; its tools are "view" and
// "bash", and it ends on a reply without tool calls.
func BenchmarkProcessVersusCrush(b *testing.B) {
	crush, err := exec.LookPath("crush")
	if err != nil {
		b.Skip("crush is not on PATH")
	}
	bin := buildBinary(b)
	var gh, cr usage
	for i := 0; i < b.N; i++ {
		m := crushRun(b, crush)
		cr.cpu, cr.wall, cr.peakRSS = cr.cpu+m.cpu, cr.wall+m.wall, max(cr.peakRSS, m.peakRSS)
		g := guildhallRun(b, bin)
		gh.cpu, gh.wall, gh.peakRSS = gh.cpu+g.cpu, gh.wall+g.wall, max(gh.peakRSS, g.peakRSS)
	}
	n := float64(b.N)
	b.ReportMetric(float64(gh.cpu.Milliseconds())/n, "guildhall-cpu-ms/run")
	b.ReportMetric(float64(cr.cpu.Milliseconds())/n, "crush-cpu-ms/run")
	b.ReportMetric(float64(cr.cpu)/float64(max(gh.cpu, 1)), "crush/guildhall-cpu")
	b.ReportMetric(float64(cr.wall)/float64(max(gh.wall, 1)), "crush/guildhall-wall")
	b.ReportMetric(float64(cr.peakRSS)/float64(max(gh.peakRSS, 1)), "crush/guildhall-rss")
}

func hundredTurns(read, shell func(t int) fakellm.Call, last fakellm.Reply) []fakellm.Reply {
	var turns []fakellm.Reply
	for t := 0; t < 100; t++ {
		c := shell(t)
		if t%2 == 0 {
			c = read(t)
		}
		turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{c}})
	}
	return append(turns, last)
}

func guildhallRun(b *testing.B, bin string) usage {
	f, ws, guild := hundredTurnWorkspace(b)
	defer f.Close()
	m, out, err := measure(exec.Command(bin, "run", "--workspace", ws, "--guild", guild, "--base-url", f.BaseURL(),
		"--model", "fake-model", "--no-input", "--json", "--sandbox", "none", "do 100 turns"))
	if err != nil {
		b.Fatalf("guildhall: %v\n%s", err, out)
	}
	return m
}

func crushRun(b *testing.B, crush string) usage {
	f := fakellm.New()
	defer f.Close()
	// The marker in the prompt puts every request of crush's, whatever its
	// system prompt, in one queue.
	f.Queue("solo", hundredTurns(
		func(int) fakellm.Call {
			return fakellm.Call{Name: "view", Args: map[string]string{"file_path": "notes.txt"}}
		},
		func(t int) fakellm.Call {
			return fakellm.Call{Name: "bash", Args: map[string]string{"command": "echo turn " + strconv.Itoa(t)}}
		},
		fakellm.Reply{Content: "done"})...)
	ws := b.TempDir()
	_ = os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("some notes\n"), 0o644)
	cfg := `{"providers":{"fake":{"name":"fake","type":"openai-compat","base_url":"` + f.BaseURL() + `","api_key":"none",` +
		`"models":[{"id":"fake-model","name":"fake","context_window":32768,"default_max_tokens":1024}]}},` +
		`"models":{"large":{"provider":"fake","model":"fake-model"},"small":{"provider":"fake","model":"fake-model"}},` +
		`"permissions":{"allowed_tools":["view","bash"]}}`
	_ = os.WriteFile(filepath.Join(ws, "crush.json"), []byte(cfg), 0o644)
	cmd := exec.Command(crush, "run", "[role:solo] do 100 turns")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+b.TempDir(), "XDG_CONFIG_HOME="+b.TempDir(), "XDG_DATA_HOME="+b.TempDir())
	m, out, err := measure(cmd)
	if err != nil {
		b.Fatalf("crush: %v\n%s", err, out)
	}
	return m
}

// BenchmarkProcessResume100MBWith10SSEClients is BenchmarkProcessResume100MB
// with the browser console up (--web) and 10 clients on its event stream,
// /api/events, through the real server with its access token (as a
// programmatic client sends it, Authorization: Bearer). The clients
// connect as soon as the console's URL is printed, while the backlog is
// read, and read every notice until each has been told the run ended
// (its run_status); in "flow" each
// client also fetches the run's flow, as a browser opening the console
// does. It reports the wall time and CPU to the end of the run (and of
// the flows' fetches), the peak RSS, and the notices each client received.
func BenchmarkProcessResume100MBWith10SSEClients(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 100 MB and runs the binary")
	}
	bin := buildBinary(b)
	g := grownDemo(b, bin)
	dir, id, size := g.dir, g.id, g.size
	const clients = 10
	// "stream" clients only read the stream; "flow" clients also fetch the
	// run's whole flow once they are connected, as a browser opening the
	// console does.
	for _, flow := range []bool{false, true} {
		name := "stream"
		if flow {
			name = "flow"
		}
		b.Run(name, func(b *testing.B) {
			var cpu, wall time.Duration
			var rss, notices int64
			for i := 0; i < b.N; i++ {
				g.restore(b)
				r := resumeWithClients(b, bin, dir, id, clients, flow)
				cpu += r.cpu
				wall += r.wall
				rss = max(rss, r.rss)
				notices += r.notices
			}
			n := float64(b.N)
			b.ReportMetric(float64(size)/(1<<20), "log-MiB")
			b.ReportMetric(float64(cpu.Milliseconds())/n, "cpu-ms/run")
			b.ReportMetric(float64(wall.Milliseconds())/n, "wall-ms/run")
			b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
			b.ReportMetric(float64(notices)/n/clients, "notices/client")
		})
	}
}

type clientsRun struct {
	wall, cpu time.Duration
	rss       int64 // KiB
	notices   int64
}

// resumeWithClients runs one resume with the console up and clients on
// its stream; it stops the process (SIGINT: the console stays up after
// the run) once the run has finished and every client has seen its end.
func resumeWithClients(b *testing.B, bin, dir, id string, clients int, flow bool) clientsRun {
	argv := []string{bin, "resume", "--workspace", dir, "--provider", "script", "--no-input", "--web", "127.0.0.1:0", id}
	if w := os.Getenv("GUILDHALL_BENCH_WRAP"); w != "" {
		argv = append(strings.Fields(w), argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	pw.Close()
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The console's URL as `--web` prints it.
	consoleURL := regexp.MustCompile(`browser console: (http://127\.0\.0\.1:\d+/)\?token=([0-9a-f]+)`)
	var url, token string
	var tail []string
	for url == "" {
		line, ok := <-lines
		if !ok {
			b.Fatalf("the console never came up:\n%s", strings.Join(tail, "\n"))
		}
		tail = append(tail, line)
		if m := consoleURL.FindStringSubmatch(line); m != nil {
			url, token = m[1], m[2]
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counts := make([]atomic.Int64, clients)
	ended := make([]atomic.Bool, clients) // the client saw the run's run_status
	errs := make(chan error, 2*clients)
	var flows sync.WaitGroup
	for c := range clients {
		go func() { errs <- readEvents(ctx, url+"api/events", token, &counts[c], &ended[c]) }()
		if flow {
			flows.Add(1)
			go func() {
				defer flows.Done()
				if err := fetchFlow(ctx, url+"api/runs/"+id+"/flow", token); err != nil {
					errs <- err
				}
			}()
		}
	}
	// The run is over when the headless printer says so; the console then
	// waits for an interrupt.
	for finished := false; !finished; {
		select {
		case line, ok := <-lines:
			if !ok {
				b.Fatalf("the resume exited before finishing:\n%s", strings.Join(tail, "\n"))
			}
			tail = append(tail, line)
			finished = strings.Contains(line, "run finished; the browser console stays up")
		case err := <-errs:
			b.Fatalf("a stream client: %v", err)
		case <-time.After(60 * time.Second):
			b.Fatalf("no end of the run within 60 s:\n%s", strings.Join(tail, "\n"))
		}
	}
	// The run is not over for its viewers until each has been told of its
	// end, and has the flow it fetched.
	flowsDone := make(chan struct{})
	go func() {
		flows.Wait()
		for c := range clients {
			for !ended[c].Load() && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
		}
		close(flowsDone)
	}()
	select {
	case <-flowsDone:
	case err := <-errs:
		b.Fatalf("a client: %v", err)
	case <-time.After(60 * time.Second):
		b.Fatal("the clients were not told of the run's end, or had no flow, within 60 s")
	}
	res := clientsRun{wall: time.Since(start)}
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	res.cpu = procCPU(b, proc)
	res.rss, _ = highWaterRSS(proc + "/status")
	if meta, err := (store.Workspace{Dir: dir}).ReadMeta(id); err != nil || meta.Status != store.StatusSuccess {
		b.Fatalf("the resumed run did not finish: %+v %v", meta, err)
	}
	cancel()
	for c := range clients {
		res.notices += counts[c].Load()
		if counts[c].Load() == 0 {
			b.Fatalf("client %d received no notice", c)
		}
	}
	_ = cmd.Process.Signal(os.Interrupt)
	return res
}

// readEvents reads the SSE stream at url, counting its notices and noting
// the run's run_status, until ctx ends.
func readEvents(ctx context.Context, url, token string, n *atomic.Int64, ended *atomic.Bool) error {
	res, err := getWithToken(ctx, url, token)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ") {
			n.Add(1)
		}
		if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"type":"run_status"`) {
			ended.Store(true)
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("the stream ended early: %v", sc.Err())
}

// getWithToken GETs url with the console's access token, as the browser
// client does; a status other than 200 is an error.
func getWithToken(ctx context.Context, url, token string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return res, nil
}

// fetchFlow reads the run's flow as a browser does when it opens: the
// whole InteractionModel as a snapshot.
func fetchFlow(ctx context.Context, url, token string) error {
	res, err := getWithToken(ctx, url, token)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var env struct {
		Kind string `json:"kind"`
	}
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil || env.Kind == "" {
		return fmt.Errorf("GET %s: %s, %v", url, res.Status, err)
	}
	return nil
}

// BenchmarkProcessConsole100ToolTurns measures the console (`guildhall
// TASK` on a 100x30 pseudo-terminal that answers the terminal's queries)
// running the 100-turn workload to its end with no browser and no attached
// terminal: the CPU a console run pays for its own screen and for the API
// it serves for `attach`. It reports the CPU used until meta.json records
// the run's end, and the wall time to then.
func BenchmarkProcessConsole100ToolTurns(b *testing.B) {
	bin := buildBinary(b)
	var wall, cpu time.Duration
	for i := 0; i < b.N; i++ {
		f, ws, guild := hundredTurnWorkspace(b)
		w, c := consoleRun(b, bin, ws, "--workspace", ws, "--guild", guild, "--base-url", f.BaseURL(), "--model", "fake-model", "--sandbox", "none", "do 100 turns")
		f.Close()
		wall += w
		cpu += c
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/run")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/run")
}

// consoleRun starts the console with args on a pseudo-terminal and returns
// the wall time and CPU until the workspace's only run has a terminal
// status.
func consoleRun(b *testing.B, bin, ws string, args ...string) (wall, cpu time.Duration) {
	master, cmd, start, stop := startOnTerminal(b, bin, args...)
	defer stop()
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := master.Read(buf)
			if err != nil {
				return
			}
			answerQueries(master, buf[:n])
		}
	}()
	deadline := start.Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		metas, _ := filepath.Glob(filepath.Join(ws, ".orchestration", "runs", "run-*", "meta.json"))
		if len(metas) != 1 {
			continue
		}
		raw, err := os.ReadFile(metas[0])
		var m struct{ Status string }
		if err != nil || json.Unmarshal(raw, &m) != nil || m.Status == "running" {
			continue
		}
		wall, cpu = time.Since(start), procCPU(b, proc)
		if m.Status != "success" {
			b.Fatalf("the console's run ended %s:\n%s", m.Status, raw)
		}
		return wall, cpu
	}
	b.Fatal("the console's run did not end within 60 s")
	return
}
