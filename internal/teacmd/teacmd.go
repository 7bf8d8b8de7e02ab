package teacmd

import (
	"reflect"
	"runtime"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// timers are the functions whose commands wait on a timer: tea.Tick and
// tea.Every, and a text cursor's blink (bubbles' cursor, which huh's and
// bubbles' text fields use).
var timers = []string{
	"charm.land/bubbletea/v2.Tick.",
	"charm.land/bubbletea/v2.Every.",
	"charm.land/bubbles/v2/cursor.(*Model).Blink.",
}

// Name is the name of the function a command is, as the runtime knows it
// ("paydesk/ui.waitChange.func1").
func Name(c tea.Cmd) string {
	if c == nil {
		return ""
	}
	if f := runtime.FuncForPC(reflect.ValueOf(c).Pointer()); f != nil {
		return f.Name()
	}
	return ""
}

// Timer reports whether c waits on a timer before it returns its message.
func Timer(c tea.Cmd) bool {
	name := Name(c)
	for _, t := range timers {
		if strings.HasPrefix(name, t) {
			return true
		}
	}
	return false
}
