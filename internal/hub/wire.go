package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Request is one command a client asks the owner to run.
type Request struct {
	// Args are the command's arguments, without the program name.
	Args []string `json:"args"`
	// Env holds the client's settings variables (never a secret: the owner
	// has its own).
	Env map[string]string `json:"env,omitempty"`
	// Dir is the client's working folder: relative paths are read there.
	Dir string `json:"dir"`
	// Stdin says the client has a standard input to give when asked;
	// Interactive that it is a terminal someone can answer on.
	Stdin       bool `json:"stdin"`
	Interactive bool `json:"interactive"`
	// StderrTerminal says the client's stderr is a terminal (a batch draws
	// its progress there).
	StderrTerminal bool `json:"stderrTerminal,omitempty"`
}

// Limits on a request: an argv and environment of a command line, never
// megabytes.
const (
	maxRequest = 1 << 20
	maxArgs    = 4096
	maxEnv     = 64
)

// decodeRequest reads and checks a request from a client.
func decodeRequest(r io.Reader) (Request, error) {
	var req Request
	dec := json.NewDecoder(io.LimitReader(r, maxRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return Request{}, fmt.Errorf("request: %w", err)
	}
	if dec.More() {
		return Request{}, errors.New("request: more than one JSON value")
	}
	switch {
	case len(req.Args) == 0:
		return Request{}, errors.New("request: args: at least the command's name is required")
	case len(req.Args) > maxArgs:
		return Request{}, fmt.Errorf("request: args: %d, at most %d", len(req.Args), maxArgs)
	case len(req.Env) > maxEnv:
		return Request{}, fmt.Errorf("request: env: %d variables, at most %d", len(req.Env), maxEnv)
	case req.Dir == "" || !strings.HasPrefix(req.Dir, "/"):
		return Request{}, fmt.Errorf("request: dir %q: an absolute folder is required", req.Dir)
	}
	for _, a := range append([]string{req.Dir}, req.Args...) {
		if !utf8.ValidString(a) || strings.ContainsRune(a, 0) {
			return Request{}, errors.New("request: an argument or dir is not UTF-8 text without NUL")
		}
	}
	for k, v := range req.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return Request{}, fmt.Errorf("request: env %q: not a variable", k)
		}
	}
	return req, nil
}

// frame is one piece of the owner's answer: first the run's token (Run:
// POST /cancel/{token} interrupts it), then output for stdout (O) or stderr
// (E), a request for the client's stdin (Stdin, the token to post it
// under), and the command's exit code, always last.
type frame struct {
	Run   string `json:"run,omitempty"`
	O     []byte `json:"o,omitempty"`
	E     []byte `json:"e,omitempty"`
	Stdin string `json:"stdin,omitempty"`
	Exit  *int   `json:"exit,omitempty"`
}

// maxFrame bounds one frame the client decodes (base64 of a write).
const maxFrame = 4 << 20
