package domain

import "errors"

// ErrNotFound: no such reservation, transaction, push or operation (or a
// list's sort order that does not exist).
var ErrNotFound = errors.New("not found")

// ErrNeedsMigration: the database's schema is older than this paydesk and
// the role may not change it; `paydesk db migrate` (by an owner) does.
var ErrNeedsMigration = errors.New("the database needs `paydesk db migrate` (by a role that may change the schema)")

// ErrReadOnlyRole: the database refused a write because the role it was
// opened as may only read (a viewer's role).
var ErrReadOnlyRole = errors.New("this database role may only read")

// ErrNewerSchema: the file or database was written by a newer paydesk.
var ErrNewerSchema = errors.New("written by a newer paydesk")

// ErrFillCut is the error of a fill or a conversion that a test stopped
// after a number of chunks (store.Options.failFillAfter).
var ErrFillCut = errors.New("fill cut short (test)")
