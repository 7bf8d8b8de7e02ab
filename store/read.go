package store

// LoadReservationSummaries returns the list row of every reservation, in no
// particular order. It reads only the compact summary bucket (100,000 rows in
// well under 300 ms).
func (db *DB) LoadReservationSummaries() ([]Summary, error) { return nil, errNotYet }

// Reservation finds a reservation by key or reservation number.
func (db *DB) Reservation(ref string) (*Reservation, error) { return nil, errNotYet }

// Transaction finds a transaction by key.
func (db *DB) Transaction(key string) (*Transaction, error) { return nil, errNotYet }

// TransactionsFor returns the captures and refunds of a reservation (by key or
// reservation number), oldest first.
func (db *DB) TransactionsFor(ref string) ([]*Transaction, error) { return nil, errNotYet }

// Transactions returns every transaction, newest first.
func (db *DB) Transactions() ([]*Transaction, error) { return nil, errNotYet }

// Push returns one stored push by ID.
func (db *DB) Push(id uint64) (*PushRecord, error) { return nil, errNotYet }

// Pushes returns up to limit stored pushes, newest first, with IDs below
// beforeID (0: from the newest).
func (db *DB) Pushes(limit int, beforeID uint64) ([]*PushRecord, error) { return nil, errNotYet }

// PushesFor returns the pushes about any of the given keys, oldest first.
func (db *DB) PushesFor(keys ...string) ([]*PushRecord, error) { return nil, errNotYet }

// PushesForReservation returns the pushes of a reservation and of all its
// data requests and transactions, oldest first.
func (db *DB) PushesForReservation(ref string) ([]*PushRecord, error) { return nil, errNotYet }

// RejectedPushes returns up to limit rejected pushes, newest first (0: all
// kept).
func (db *DB) RejectedPushes(limit int) ([]*PushRecord, error) { return nil, errNotYet }

// Op returns one operation.
func (db *DB) Op(id uint64) (*PendingOp, error) { return nil, errNotYet }

// Ops returns the operations in the given states (none: all), newest first.
func (db *DB) Ops(states ...OpState) ([]*PendingOp, error) { return nil, errNotYet }

// Audit returns up to limit audit entries, newest first (0: all).
func (db *DB) Audit(limit int) ([]AuditEntry, error) { return nil, errNotYet }

// Exchanges returns up to limit gateway log entries, newest first (0: all).
func (db *DB) Exchanges(limit int) ([]Exchange, error) { return nil, errNotYet }

// Counts returns the status bar figures.
func (db *DB) Counts() (Counts, error) { return Counts{}, errNotYet }
