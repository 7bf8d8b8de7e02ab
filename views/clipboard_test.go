package views

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
)

// statusTexts runs cmd (and a batch's commands) and returns the status
// lines it shows.
func statusTexts(cmd tea.Cmd) []string {
	if cmd == nil {
		return nil
	}
	switch m := cmd().(type) {
	case StatusMsg:
		return []string{m.Text}
	case tea.BatchMsg:
		var out []string
		for _, c := range m {
			out = append(out, statusTexts(c)...)
		}
		return out
	}
	return nil
}

// y and Y cannot know that the clipboard took the text (OSC 52 has no
// answer; tmux without set-clipboard drops it): they say it was sent to
// the terminal's clipboard, never that it was copied.
func TestCopyKeysSayWhatTheyKnow(t *testing.T) {
	ctx := NewContext(func() time.Time { return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) })
	p := &store.PushRecord{ID: 7, Key: "ABCDEF", Body: []byte(`{"Transaction":{}}`)}
	for _, k := range []tea.KeyPressMsg{{Code: 'y', Text: "y"}, {Code: 'Y', Text: "Y", Mod: tea.ModShift}} {
		texts := statusTexts(pushActions(ctx, k, p))
		if len(texts) != 1 || strings.Contains(texts[0], "copied") || !strings.Contains(texts[0], "sent") || !strings.Contains(texts[0], "OSC 52") {
			t.Errorf("%s says %q", k.String(), texts)
		}
	}
}
