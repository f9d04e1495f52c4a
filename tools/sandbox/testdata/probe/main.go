// Command probe is what a hostile workspace would run inside the sandbox:
// it tries one kind of escape and prints one line per attempt. The sandbox
// tests build it (CI has Go but no Python) and run it through run_shell, in
// the sandbox and, as a control that the attempt is real, without it.
//
// Every line is "OK <what>" for an attempt that worked or "NO <what>:
// <error>" for one that failed; the exit status is 0 when anything worked.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe tcp|dns|lookup|unix|abstract|tiocsti|http ARGS")
		os.Exit(2)
	}
	args := os.Args[2:]
	var ok bool
	switch os.Args[1] {
	case "tcp":
		ok = each(args, dialTCP)
	case "dns":
		ok = each(args[1:], func(name string) error { return queryDNS(args[0], name) })
	case "lookup":
		ok = each(args, func(name string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			addrs, err := net.DefaultResolver.LookupHost(ctx, name)
			if err == nil {
				fmt.Println("resolved", name, addrs)
			}
			return err
		})
	case "unix":
		ok = each(listOrFile(args), dialUnix)
	case "abstract":
		ok = each(args, func(name string) error { return dialUnix("@" + name) })
	case "tiocsti":
		ok = each(append([]string{"fd:0", "fd:1", "fd:2", "/dev/tty"}, args...), inject)
	case "http":
		ok = each(args, fetch)
	default:
		fmt.Fprintln(os.Stderr, "probe: unknown attempt", os.Args[1])
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func each(targets []string, try func(string) error) bool {
	// Many targets (every socket on the host): report the failures by
	// count only, so the successes fit in a tool result.
	quiet := len(targets) > 20
	any := false
	for _, t := range targets {
		if err := try(t); err != nil {
			if !quiet {
				fmt.Printf("NO %s: %v\n", t, err)
			}
			continue
		}
		fmt.Printf("OK %s\n", t)
		any = true
	}
	fmt.Printf("TRIED %d\n", len(targets))
	return any
}

// listOrFile expands "-f FILE" into the file's lines.
func listOrFile(args []string) []string {
	if len(args) == 2 && args[0] == "-f" {
		f, err := os.Open(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
		var out []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	return args
}

func dialTCP(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

func dialUnix(path string) error {
	var errs []string
	for _, network := range []string{"unix", "unixgram", "unixpacket"} {
		c, err := net.DialTimeout(network, path, 2*time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		errs = append(errs, err.Error())
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

// queryDNS asks server (host:port) for name over UDP, bypassing
// /etc/resolv.conf.
func queryDNS(server, name string) error {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", server)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, name)
	if err == nil {
		fmt.Println("resolved", name, addrs)
	}
	return err
}

// inject pushes a byte into a terminal's input queue with TIOCSTI: "fd:N"
// is an inherited descriptor, anything else a path to open.
func inject(target string) error {
	fd := -1
	if n, ok := strings.CutPrefix(target, "fd:"); ok {
		fmt.Sscan(n, &fd)
	} else {
		f, err := os.OpenFile(target, os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		fd = int(f.Fd())
	}
	for _, b := range []byte("INJECTED\n") {
		c := b
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSTI, uintptr(unsafe.Pointer(&c))); errno != 0 {
			return errno
		}
	}
	return nil
}

// fetch GETs a URL through the proxy named by HTTPS_PROXY/HTTP_PROXY, as
// every common client does; unlike net/http's default it uses the proxy
// for loopback hosts too, since the test servers live there.
func fetch(u string) error {
	proxy := os.Getenv("HTTPS_PROXY")
	if strings.HasPrefix(u, "http:") {
		proxy = os.Getenv("HTTP_PROXY")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	if proxy != "" {
		pu, err := url.Parse(proxy)
		if err != nil {
			return err
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
	body := strings.ReplaceAll(string(b), "\n", " ")
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	fmt.Printf("BODY %s %s\n", u, body)
	return nil
}
