package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/vt"
	gossh "golang.org/x/crypto/ssh"
)

type clientPlan struct {
	n          int
	addr, key  string
	user       string
	cols, rows int
	emulate    bool
}

// runClients holds p.n consoles over SSH until its stdin closes. It says
// "ready" on stdout once every console drew its first screen, and
// answers each "stat" line on stdin with the bytes its consoles read so
// far.
func runClients(ctx context.Context, p clientPlan) error {
	pem, err := os.ReadFile(p.key)
	if err != nil {
		return err
	}
	signer, err := gossh.ParsePrivateKey(pem)
	if err != nil {
		return fmt.Errorf("%s: %w", p.key, err)
	}
	cfg := &gossh.ClientConfig{User: p.user, Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: time.Minute}
	var read atomic.Int64
	var conns []*gossh.Client
	defer func() {
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() { _ = c.Close() })
		}
		wg.Wait()
	}()
	ready := make(chan struct{}, p.n)
	for i := range p.n {
		c, err := openConsole(cfg, p, &read, ready)
		if err != nil {
			return fmt.Errorf("console %d: %w", i+1, err)
		}
		conns = append(conns, c)
	}
	deadline := time.NewTimer(2 * time.Minute)
	defer deadline.Stop()
	for range p.n {
		select {
		case <-ready:
		case <-deadline.C:
			return errors.New("not every console drew its first screen within two minutes")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() == "stat" {
			fmt.Printf("stat %d\n", read.Load())
		}
	}
	return nil
}

// openConsole opens one console: a session with a pty of the plan's size
// whose output is read to the end, as a terminal reads it.
func openConsole(cfg *gossh.ClientConfig, p clientPlan, read *atomic.Int64, ready chan<- struct{}) (*gossh.Client, error) {
	c, err := gossh.Dial("tcp", p.addr, cfg)
	if err != nil {
		return nil, err
	}
	sess, err := c.NewSession()
	if err != nil {
		c.Close()
		return nil, err
	}
	in, err := sess.StdinPipe()
	if err != nil {
		c.Close()
		return nil, err
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		c.Close()
		return nil, err
	}
	if err := sess.RequestPty("xterm-256color", p.rows, p.cols, gossh.TerminalModes{}); err != nil {
		c.Close()
		return nil, err
	}
	if err := sess.Shell(); err != nil {
		c.Close()
		return nil, err
	}
	var term *vt.Emulator
	if p.emulate {
		term = vt.NewEmulator(p.cols, p.rows)
		// The terminal answers the program's queries on its input, as a
		// real one does.
		go func() { _, _ = io.Copy(in, term) }()
	}
	go func() {
		buf := make([]byte, 32<<10)
		var tail []byte // the end of the last read: "quit", the end of the first screen, may straddle two
		signalled := false
		for {
			n, err := out.Read(buf)
			if n > 0 {
				read.Add(int64(n))
				if term != nil {
					_, _ = term.Write(buf[:n])
				}
				if !signalled {
					tail = append(tail, buf[:n]...)
					if bytes.Contains(tail, []byte("quit")) {
						signalled = true
						ready <- struct{}{}
					}
					tail = tail[max(0, len(tail)-16):]
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) || !signalled {
					fmt.Fprintf(os.Stderr, "sshload clients: a console ended: %v\n", strings.TrimSpace(fmt.Sprint(err)))
				}
				return
			}
		}
	}()
	return c, nil
}
