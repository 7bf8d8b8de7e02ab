package api

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one broken rule: the parameter (or envelope field) it is
// about, the article group it sits in if any, and the rule in words.
type FieldError struct {
	Field string
	Group string // article GroupID, "" outside article groups
	Rule  string
}

func (f FieldError) String() string {
	if f.Group != "" {
		return "article " + f.Group + " " + f.Field + ": " + f.Rule
	}
	return f.Field + ": " + f.Rule
}

// ValidationError lists every rule a request breaks. It comes from local
// validation before anything is sent, or from the gateway's status 491 (then
// Gateway holds its RequestErrors).
type ValidationError struct {
	Action  string
	Fields  []FieldError
	Gateway *RequestErrors
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(e.Action)
	b.WriteString(": ")
	n := 0
	for _, f := range e.Fields {
		if n > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.String())
		n++
	}
	for _, g := range e.Gateway.All() {
		if n > 0 {
			b.WriteString("; ")
		}
		b.WriteString(g.Text())
		n++
	}
	if n == 0 {
		b.WriteString("validation failure")
	}
	return b.String()
}

// Text is the item in one line, "Name: message". A message that names
// its parameter already (as some gateways write it) is not prefixed again.
func (g ErrorItem) Text() string {
	msg := g.ErrorMessage
	if msg == "" {
		msg = g.Error
	}
	if g.Name == "" || strings.HasPrefix(msg, g.Name+": ") || msg == g.Name {
		return msg
	}
	return g.Name + ": " + msg
}

// Has reports whether a field breaks a rule, for tests and forms.
func (e *ValidationError) Has(field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	for _, g := range e.Gateway.All() {
		if g.Name == field {
			return true
		}
	}
	return false
}

// RequestErrors renders the field errors as the gateway's lists: unknown
// services and actions go to ServiceErrors / ActionErrors, everything else
// to ParameterErrors.
func (e *ValidationError) RequestErrors(service string) *RequestErrors {
	re := &RequestErrors{
		ChannelErrors: []ErrorItem{}, ServiceErrors: []ErrorItem{}, ActionErrors: []ErrorItem{},
		ParameterErrors: []ErrorItem{}, CustomParameterErrors: []ErrorItem{},
	}
	for _, f := range e.Fields {
		msg := f.String()
		switch f.Field {
		case FieldService:
			re.ServiceErrors = append(re.ServiceErrors, ErrorItem{Name: service, Error: "ServiceNotAvailable", ErrorMessage: msg})
		case FieldAction:
			re.ActionErrors = append(re.ActionErrors, ErrorItem{Service: service, Name: e.Action, Error: "ActionNotAvailable", ErrorMessage: msg})
		case FieldChannel:
			re.ChannelErrors = append(re.ChannelErrors, ErrorItem{Service: service, Action: e.Action, Name: FieldChannel, Error: "ChannelNotSupported", ErrorMessage: msg})
		default:
			// The item names the parameter; its message is the rule (in
			// its article group), so "Name: message" says the field once.
			msg = f.Rule
			if f.Group != "" {
				msg = "article " + f.Group + ": " + f.Rule
			}
			re.ParameterErrors = append(re.ParameterErrors, ErrorItem{Service: service, Action: e.Action, Name: f.Field, Error: "ParameterInvalid", ErrorMessage: msg})
		}
	}
	return re
}

// Pseudo field names for errors about the service item itself, and the
// request's Channel header.
const (
	FieldService = "Services.ServiceList.Name"
	FieldAction  = "Services.ServiceList.Action"
	FieldChannel = "Channel"
)

// ChannelWeb is the one channel the deferred-invoice service is used with.
const ChannelWeb = "Web"

// ChannelRule checks the Channel header a request came with: the
// deferred-invoice service is used with channel Web only. The header is
// optional for the family's clients, so "" counts as Web; gift cards take
// any channel.
func ChannelRule(service, channel string) []FieldError {
	channel = strings.TrimSpace(channel)
	if channel == "" || strings.EqualFold(channel, ChannelWeb) || !strings.EqualFold(service, ServiceDeferred) {
		return nil
	}
	return []FieldError{{Field: FieldChannel, Rule: "the deferred-invoice service is used with channel Web, not " + strconvQuote(channel)}}
}

// fieldErrors collects errors, keeping only the first per field and group
// so a value that fails to parse is not reported twice.
type fieldErrors []FieldError

func (fe *fieldErrors) add(group, field, rule string) {
	for _, f := range *fe {
		if f.Field == field && f.Group == group {
			return
		}
	}
	*fe = append(*fe, FieldError{Field: field, Group: group, Rule: rule})
}

func (fe fieldErrors) err(action string) error {
	if len(fe) == 0 {
		return nil
	}
	return &ValidationError{Action: action, Fields: fe}
}

// Errors the client returns; branch on them with errors.Is / errors.As.
var (
	// ErrAccessDenied is HTTP 400: the signature or website key was refused.
	ErrAccessDenied = errors.New("access denied (HTTP 400): signature or website key refused")
	// ErrBadRequest is HTTP 500: the gateway could not read the request.
	ErrBadRequest = errors.New("bad request (HTTP 500): the gateway could not read the request")
)

// RejectedError is status 690: the provider declined, e.g. the risk check.
type RejectedError struct {
	Action   string
	Response *Response
}

func (e *RejectedError) Error() string {
	msg := e.Action + ": rejected (690)"
	if e.Response != nil && e.Response.Status.Code.Description != "" {
		msg += ": " + e.Response.Status.Code.Description
	}
	return msg
}

// NotSentError means the request never left: connection refused, DNS
// failure, invalid URL. Trying again is safe.
type NotSentError struct{ Err error }

func (e *NotSentError) Error() string { return "not sent: " + e.Err.Error() }
func (e *NotSentError) Unwrap() error { return e.Err }

// OutcomeUnknownError means the request was (or may have been) sent but no
// trustworthy answer came back: a timeout, a reset, an unreadable or
// wrongly signed response. The operation may have happened; it must never
// be retried automatically.
type OutcomeUnknownError struct {
	Action string
	Err    error
}

func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("%s: outcome unknown (the gateway may have processed it): %v", e.Action, e.Err)
}
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }
