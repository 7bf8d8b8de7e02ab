package store

import (
	"context"
	"errors"
	"testing"

	"paydesk/internal/pgtest"
)

// TestBusListensAfterAFailedFirstDial: the change bus's first connection
// is dialled by Open while the schema is looked at; when that dial failed,
// the bus dials again, as it does whenever its connection is lost.
func TestBusListensAfterAFailedFirstDial(t *testing.T) {
	url := pgtest.Fresh(t)
	db, err := Open(url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, stop := context.WithCancel(context.Background())
	b := &changeBus{db: db, dsn: url, origin: "test", ctx: ctx, stop: stop, ready: make(chan struct{})}
	b.wg.Add(1)
	go b.listen(nil, errors.New("the first dial failed"))
	defer b.close()
	<-b.ready // a bus that never dials again stays here until go test's timeout
}
