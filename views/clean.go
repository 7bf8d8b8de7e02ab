package views

import "paydesk/internal/textsafe"

// clean makes outside text (push fields, gateway messages, names typed by
// customers) inert before it is drawn: control and escape sequences go.
func clean(s string) string { return textsafe.Clean(s) }
