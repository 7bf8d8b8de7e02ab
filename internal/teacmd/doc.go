// Package teacmd tells, for tests that run Bubble Tea commands themselves,
// which commands wait on a timer: a test that runs every other command to
// its end, and leaves these, never waits for a clock and never mistakes a
// slow command for a waiting one.
package teacmd
