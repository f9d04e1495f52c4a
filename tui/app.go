package tui

import (
	"cmp"
	"context"
	"io"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Options configure the console.
type Options struct {
	// Labels are the guild's display labels; Tier the starting tier.
	Labels render.LabelSet
	Tier   render.Tier
	// Effort is the Compose default (the project setting).
	Effort string
	// Task, when set, is submitted at once.
	Task     string
	Continue string
	LogLevel string
	// Theme is the console's colours, ThemeDark (the default) or
	// ThemeLight: DetectTheme resolves the operator's setting, "auto"
	// included, before the console starts.
	Theme string
	// Profile, when set, is the colour depth to draw at (tests); else it
	// is what Output's environment says.
	Profile *termenv.Profile
	// MarkdownStyle is a glamour standard style; by default the theme's
	// ("dark" or "light").
	MarkdownStyle string
	// NoAnimation freezes the flow animation (golden tests).
	NoAnimation bool
	// Output is where copies write their OSC 52 sequence: the program's
	// own terminal output (os.Stdout by default).
	Output io.Writer
	// Clipboard is how y copies: ClipboardOSC52 (the default), ClipboardFile
	// or ClipboardBoth. ClipboardFile is where copies go when OSC 52 cannot
	// carry them; NoOSC52 says the terminal does not take OSC 52. Run fills
	// them from the environment (GUILDHALL_CLIPBOARD, TERM, XDG_STATE_HOME).
	Clipboard     string
	ClipboardFile string
	NoOSC52       bool
	// TmuxClipboard, under tmux, reads tmux's set-clipboard option: a copy
	// asks it first, since tmux drops OSC 52 unless it is "on". Run fills
	// it when $TMUX is set.
	TmuxClipboard func(context.Context) (string, error)
	// Mouse starts with mouse capture on (clicks select, the wheel
	// scrolls); off, the terminal selects text. M toggles it.
	Mouse bool
	// Context bounds the runs the console submits.
	Context context.Context
	// Notice is shown once at start (the browser console's URL).
	Notice string
	// Setup is a one-line description of what the console runs with (the
	// workspace trust decision, the sandbox), shown in the header when no
	// notice or banner needs the line.
	Setup string
	// Summarize, when set, returns a run's generated thread title and
	// description (runner.ThreadSummary with the session's provider); the
	// task-identity header prefers them to the deterministic identity.
	Summarize func(ctx context.Context, runID string) (title, description string, err error)
	// Queue, when set, is the workspace's task queue (a *runner.Scheduler):
	// it adds the Queue screen, and Compose (and Task) queue a task instead
	// of failing while a run is live.
	Queue Queue
	// Notes are what the start-up found (configuration, trust, resumable
	// runs, the model endpoint): the banner points to them when the
	// console opens, and N shows them.
	Notes []string
	// Endpoint, when set, lets the console retry the model endpoint and
	// change its settings for the session (endpoint.go).
	Endpoint Endpoint
	// Ephemeral says the workspace is removed when the console ends (the
	// demo's temporary copy): nothing it runs can be resumed.
	Ephemeral bool
	// Attached says the session is remote (guildhall attach): another
	// process runs the run, and quitting only detaches this terminal.
	Attached bool
	// EndpointProblem, when set, is why the endpoint did not answer at
	// start: the console opens with the endpoint dialog, and Task waits
	// until the endpoint answers.
	EndpointProblem string
	// Connect, when set, is the endpoint's start-up probe, run in the
	// background once the console is on screen (connect.go): the footer
	// says "connecting to …" and Task waits until it reports.
	Connect func(context.Context) Connected
	// Editor is the operator's editor command for ctrl+g ($VISUAL, else
	// $EDITOR; Run fills it from the environment).
	Editor string
	// Alerts rings the terminal when a question opens or a run ends
	// (notify.go); Run turns them off without a terminal.
	Alerts Alerts
}

type screen int

const (
	screenWatch screen = iota
	screenHistory
	screenCompose
	screenQueue
	screenLog
)

type viewKind int

const (
	viewFlow viewKind = iota
	viewSequence
)

// layout is computed on resize.
type layout struct {
	width, height int
	bodyH         int // rows of the flow / sequence body
	streamH       int // rows of the streamed reply pane
}

func computeLayout(w, h int) layout {
	l := layout{width: max(20, w), height: max(8, h)}
	l.streamH = 2
	if l.height >= 36 {
		l.streamH = 4
	}
	// top bar, banner, identity header, stream header, caption, footer
	l.bodyH = max(1, l.height-6-l.streamH)
	return l
}

// Model is the console's top-level Bubble Tea model. It owns routing,
// focus, layout and overlays; sub-components are plain structs.
type Model struct {
	sess Session
	opts Options
	ctx  context.Context
	ws   store.Workspace
	md   *render.MarkdownRenderer
	th   theme // the colours, chosen once at start (theme.go)
	res  *render.LabelResolver
	lay  layout

	sub     *runner.Subscription
	dropped int64
	// recent keeps the live run's latest persisted events, to replay on
	// top of a resync read from the log.
	recent []event.Event
	live   *runView // the session's current run
	view   *runView // the run on screen: live, or a replay
	// replayMeta is the meta of a replayed run.
	replayMeta *store.Meta

	screen  screen
	kind    viewKind
	phase   int
	ticking bool

	flowSel   string
	seqSel    int
	seqTop    int
	seqFollow bool
	summaries map[string]string
	// summaryLoading: the live run's summary.txt is being read.
	summaryLoading bool
	health         runner.HealthView
	model          runner.ModelInfo // the session's model, for the meters
	notice         string
	quitting       bool
	started        bool // the backlog is applied: later events are news

	questions []pendingQuestion
	qHidden   bool
	q         questionState

	confirm    *confirmState
	interrupt  *interruptState
	answerCard *inquiry
	inspector  *inspectorState
	transcript *transcriptView
	plan       *planState
	showResult bool
	resultOpen resultState
	changes    *changesState // what the run on screen changed
	diff       *diffView     // the open per-file diff
	revert     *revertState  // the open revert dialog (revert.go)
	// flash is a notice from a key pressed in an overlay, shown inside it
	// (the banner line is behind it); the next key clears it.
	flash string
	// noticeSeen and noticeTicks age the notice: it clears after a few
	// health ticks (expireNotice), so "Answer sent." does not sit on the
	// banner through later runs.
	noticeSeen  string
	noticeTicks int
	mouse       bool
	help        bool
	helpScroll  int

	history historyState
	compose composeState
	queue   queueState
	logv    logState

	threads map[string]*threadInfo // per run id
	drawer  *threadDrawer

	// endpoint is the open endpoint dialog; endpointProblem the last
	// problem it showed, until the endpoint answers; heldTask the task
	// that waits for it.
	endpoint        *endpointState
	endpointProblem string
	heldTask        *runner.Submission
	// connecting is set while Options.Connect runs.
	connecting bool
	// notes is the open notes dialog; notesUnseen keeps the banner line
	// that points to it until the operator opened it or pressed esc.
	notes       *notesState
	notesUnseen bool
	// runNoteUnseen keeps the banner line that points to a note of the
	// run on screen (runView.notes) until the operator opened the notes.
	runNoteUnseen bool
}

type pendingQuestion struct {
	runID string
	q     event.AskHumanPayload
	sent  bool
}

// New builds the console over a session. It subscribes at once, so the
// backlog of the current run is on screen in the first frame.
func New(s Session, opts Options) *Model {
	if opts.Tier == "" {
		opts.Tier = render.TierFriendly
	}
	if opts.Output == nil {
		opts.Output = os.Stdout
	}
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	th := newTheme(opts.Theme == ThemeLight, colorProfile(opts))
	m := &Model{
		sess: s, opts: opts, ctx: opts.Context, ws: s.Workspace(), th: th,
		md:        render.NewMarkdownRenderer(cmp.Or(opts.MarkdownStyle, th.markdownStyle())),
		res:       render.NewLabelResolver(opts.Labels, opts.Tier),
		lay:       computeLayout(80, 24),
		seqFollow: true,
		summaries: map[string]string{},
		health:    runner.HealthView{State: runner.HealthOK},
	}
	m.notice = opts.Notice
	m.mouse = opts.Mouse
	m.notesUnseen = len(opts.Notes) > 0
	if opts.EndpointProblem != "" {
		m.openEndpoint(opts.EndpointProblem)
	}
	m.connecting = opts.Connect != nil
	m.compose.effort = opts.Effort
	if m.compose.effort == "" {
		m.compose.effort = "standard"
	}
	m.compose.editor.placeholder = "Describe the task…"
	m.compose.continueFrom = opts.Continue
	backlog, sub := s.Subscribe(1024)
	m.sub = sub
	for _, e := range backlog {
		m.applyEvent(e)
	}
	m.started = true
	m.live.refresh()
	return m
}

// Init starts the event pump, the health poll and any initial task.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{waitEvents(m.sub), loadQuestions(m.sess), healthCmd(m.sess), healthTick(), loadHistory(m.ws), modelInfoCmd(m.sess)}
	if m.opts.Task != "" {
		sub := runner.Submission{Task: m.opts.Task, Effort: m.opts.Effort, LogLevel: m.opts.LogLevel, ContinuesFrom: m.opts.Continue}
		if m.endpointProblem != "" || m.connecting {
			m.heldTask = &sub // it starts once the endpoint answers
		} else {
			cmds = append(cmds, m.submit(sub))
		}
	}
	if m.connecting {
		cmds = append(cmds, connectCmd(m.ctx, m.opts.Connect))
	}
	if m.opts.Queue != nil {
		cmds = append(cmds, m.queueRefreshCmd(), queueTick())
	}
	if m.live != nil {
		cmds = append(cmds, m.refreshThread(m.live.id))
	}
	if c := m.changes; c != nil && !c.loaded {
		cmds = append(cmds, changesCmd(m.ctx, m.sess, c.runID))
	}
	if c := m.maybeTick(); c != nil {
		cmds = append(cmds, c)
	}
	return tea.Batch(cmds...)
}

// animating reports whether the run on screen has something moving.
func (m *Model) animating() bool {
	if m.opts.NoAnimation || m.view == nil || m.view != m.live || !m.view.live() {
		return false
	}
	op, ok := render.ActiveOperation(m.view.model)
	return ok && render.IsAnimated(m.view.model, op)
}

func (m *Model) maybeTick() tea.Cmd {
	if m.ticking || !m.animating() {
		return nil
	}
	m.ticking = true
	return animTick()
}

// applyEvent folds one live event into the console.
func (m *Model) applyEvent(e event.Event) tea.Cmd {
	var cmd tea.Cmd
	if e.Type == event.RunStarted {
		var p event.RunStartedPayload
		if e.Decode(&p) == nil && (m.live == nil || m.live.id != p.RunID) {
			follow := m.view == m.live
			m.live, m.recent = newRunView(p.RunID), nil
			if follow {
				m.view, m.replayMeta = m.live, nil
				m.flowSel, m.seqSel, m.seqTop, m.seqFollow = "", 0, 0, true
				m.showResult, m.inspector, m.transcript, m.diff = false, nil, nil, nil
			}
		}
	}
	if m.live == nil {
		m.live = newRunView("")
		if m.view == nil {
			m.view = m.live
		}
	}
	m.live.apply(e)
	if !e.Ephemeral {
		if len(m.recent) >= 4096 {
			m.recent = append(m.recent[:0], m.recent[2048:]...)
		}
		m.recent = append(m.recent, e)
	}
	switch e.Type {
	case event.AskHuman:
		var p event.AskHumanPayload
		if e.Decode(&p) == nil {
			m.addQuestion(m.live.id, p)
		}
	case event.HumanAnswer:
		var p event.HumanAnswerPayload
		if e.Decode(&p) == nil {
			m.closeQuestion(p.ID)
		}
	case event.RunStatus:
		if m.live.card != nil && m.view == m.live {
			m.questions = nil
			cmd = tea.Batch(loadHistory(m.ws), m.openResult())
		}
		if c := m.live.card; c != nil && m.started && c.Card != nil && c.Card.Error != nil && c.Card.Error.Kind == runner.EndpointErrorKind {
			// The run ended because the endpoint never answered: a setup
			// problem, with the same dialog as at start.
			m.openEndpoint(c.Card.Error.Message)
		}
		cmd = tea.Batch(cmd, healthCmd(m.sess))
	case event.ProviderFailure:
		cmd = healthCmd(m.sess)
	case event.Egress:
		var p event.EgressPayload
		if e.Decode(&p) == nil && m.view == m.live {
			m.notice = strings.TrimSpace(render.EgressLine(p))
		}
	case event.TextToolCalls:
		// The endpoint writes tool calls as text: a setup problem the
		// operator can fix, said once per run, kept among the notes (N).
		if m.view == m.live {
			m.runNoteUnseen = true
		}
	case event.MCPServer:
		// A server that failed, exited or hung is news the operator needs
		// (its tools now fail); one that came up is not.
		var p event.MCPServerPayload
		if e.Decode(&p) == nil && p.State != "ready" && m.view == m.live {
			m.notice = strings.TrimSpace(render.MCPServerLine(p))
		}
	case event.InterruptResolved:
		var p event.InterruptResolvedPayload
		if e.Decode(&p) == nil && p.Trigger == "inquiry" && len(m.live.inquiries) > 0 {
			last := m.live.inquiries[len(m.live.inquiries)-1]
			m.answerCard = &last
		}
	case event.ToolResult:
		if m.plan != nil && m.view == m.live {
			var p event.ToolResultPayload
			if e.Decode(&p) == nil && p.Tool == "write_plan" {
				cmd = loadPlan(m.ws, m.live.id)
			}
		}
	}
	cmd = tea.Batch(cmd, m.alertCmd(e))
	if t := m.transcript; t != nil && m.view == m.live && t.runID == m.live.id && t.loaded {
		var tr transcript
		tr.add(e, t.roleID)
		if len(tr.entries) > 0 {
			t.entries = append(t.entries, tr.entries...)
		}
	}
	return cmd
}

func (m *Model) addQuestion(runID string, p event.AskHumanPayload) {
	for _, q := range m.questions {
		if q.q.ID == p.ID {
			return
		}
	}
	m.questions = append(m.questions, pendingQuestion{runID: runID, q: p})
	if len(m.questions) == 1 {
		m.q = questionState{opt: -1}
		m.q.editor.placeholder = "Type an answer, or pick an option"
		m.qHidden = false
	}
}

// closeQuestion drops an answered question; a note says when another
// client answered it first.
func (m *Model) closeQuestion(id string) {
	for i, q := range m.questions {
		if q.q.ID != id {
			continue
		}
		// An answer this console sent learns from its own outcome whether
		// it won (answerDoneMsg): the event's source cannot tell two
		// attached terminals apart.
		if m.started && !q.sent {
			m.notice = "The question was answered from another client."
		}
		m.questions = append(m.questions[:i], m.questions[i+1:]...)
		if i == 0 {
			m.q = questionState{opt: -1}
			m.q.editor.placeholder = "Type an answer, or pick an option"
		}
		return
	}
}
