package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"paydesk/views"
)

// intent handles what a screen asked for.
func (a *App) intent(i views.Intent) tea.Cmd {
	if a.cfg.ReadOnly && views.Changes(i) {
		a.status = views.StatusMsg{Level: views.LevelWarn, Text: "read-only console: changing actions are off (started with --read-only)"}
		return nil
	}
	if why := a.refusedByRole(i); why != "" {
		a.status = views.StatusMsg{Level: views.LevelWarn, Text: why}
		return nil
	}
	if cmd, ok := a.approvalIntent(i); ok {
		return cmd
	}
	if cmd, ok := a.deliveryIntent(i); ok {
		return cmd
	}
	switch i := i.(type) {
	case views.OpenReservation:
		return a.loadReservation(i.Key, true)
	case views.OpenTransaction:
		return a.loadTransaction(i.Key, true)
	case views.OpenPush:
		a.openPage(views.NewPushDetail(a.vctx, i.Push))
		return a.loadPushReceipts(i.Push)
	case views.ExportIntent:
		return a.export(i)
	case views.SaveFixtureIntent:
		return a.saveFixture(i)
	case views.ResendIntent:
		return a.resend(i)
	}
	if cmd, ok := a.batchIntent(i); ok {
		return cmd
	}
	return a.operation(i)
}

// stampName is a file name part from the console's clock.
func (a *App) stampName() string { return a.cfg.Now().Format("20060102-150405") }

// export writes the list to <dir>/paydesk-<name>-<time>.<format>.
func (a *App) export(e views.ExportIntent) tea.Cmd {
	dir := a.cfg.ExportDir
	path := filepath.Join(dir, fmt.Sprintf("paydesk-%s-%s.%s", e.Name, a.stampName(), e.Format))
	a.status = views.StatusMsg{Text: fmt.Sprintf("exporting %d %s…", e.Table.Len, e.Name)}
	return func() tea.Msg {
		err := writeFile(path, func(f *os.File) error {
			if e.Format == "json" {
				return e.Table.WriteJSON(f)
			}
			return e.Table.WriteCSV(f)
		})
		if err != nil {
			return views.StatusMsg{Level: views.LevelError, Text: fmt.Sprintf("export %s: %v", e.Name, err)}
		}
		if a.cfg.ExportsOnServer {
			// Short: the name must fit the status line at 80 columns.
			name := filepath.Base(path)
			return views.StatusMsg{Level: views.LevelOK, Text: fmt.Sprintf("exported %d %s: ssh … exports %s", e.Table.Len, e.Name, name)}
		}
		return views.StatusMsg{Level: views.LevelOK, Text: fmt.Sprintf("exported %d %s to %s", e.Table.Len, e.Name, absPath(path))}
	}
}

// saveFixture writes a push as a fixture: the raw body as received (what a
// test replays) next to its headers.
func (a *App) saveFixture(s views.SaveFixtureIntent) tea.Cmd {
	p := s.Push
	name := "push"
	if p.Rejected {
		name = "rejected-push"
	}
	label := p.Kind
	if label == "" {
		label = p.Envelope
	}
	base := fmt.Sprintf("%s-%d", name, p.ID)
	if label != "" {
		base += "-" + safeName(label)
	}
	dir := a.cfg.FixtureDir
	bodyPath := filepath.Join(dir, base+".json")
	headerPath := filepath.Join(dir, base+".headers")
	return func() tea.Msg {
		if dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return views.StatusMsg{Level: views.LevelError, Text: "save fixture: " + err.Error()}
			}
		}
		err := writeFile(bodyPath, func(f *os.File) error { _, err := f.Write(p.Body); return err })
		if err == nil {
			err = writeFile(headerPath, func(f *os.File) error {
				fmt.Fprintf(f, "%s %s\n", p.Method, p.URL)
				return p.Header.Write(f)
			})
		}
		if err != nil {
			return views.StatusMsg{Level: views.LevelError, Text: "save fixture: " + err.Error()}
		}
		if a.cfg.ExportsOnServer {
			name := filepath.Base(bodyPath)
			return views.StatusMsg{Level: views.LevelOK, Text: "saved push " + fmt.Sprint(p.ID) + " (+ .headers): ssh … exports " + name}
		}
		return views.StatusMsg{Level: views.LevelOK, Text: "saved push " + fmt.Sprint(p.ID) + " to " + absPath(bodyPath) + " (+ .headers)"}
	}
}

// writeFile writes a new file (0600) through fill, then syncs it.
func writeFile(path string, fill func(*os.File) error) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
