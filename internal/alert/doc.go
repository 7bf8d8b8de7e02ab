// Package alert tells someone now what needs them: an unknown outcome, a
// shipment window closing tomorrow, a statement that did not reconcile —
// once when it appears and once when it is resolved, to a signed webhook
// and/or a command.
package alert
