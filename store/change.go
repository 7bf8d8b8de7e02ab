package store

// Change is sent to subscribers after each commit.
type Change struct {
	Pushes       int      // pushes stored by the commit
	Rejected     int      // rejected pushes logged
	Receipts     int      // repeated receipts of stored pushes recorded (receipts.go)
	ReceiptKeys  []string // the keys of those pushes; nil when more than maxReceiptKeys (reload them all)
	Reservations []string // keys of reservations that changed
	Transactions []string // keys of transactions that changed
	Ops          bool     // the operation journal changed
	Audit        bool
	Exchanges    bool
	Orders       bool // an order was stored (intake, import) or refused as a conflict
	Approvals    bool // an approval request was made, decided or sent
	Endpoints    bool // the store's forward endpoints were set or cleared (outbox_endpoints.go)
	Deliveries   bool // deliveries were queued again (a resend): the outbox worker sends them at once
	// Overflow means earlier notifications were dropped because the
	// subscriber was slow: reload everything.
	Overflow bool

	// keys keys the audit entries the commit writes (auditkey.go); nil
	// writes them unkeyed.
	keys *auditKeyring

	// inbox: the commit applied pushes from the push inbox (PostgreSQL):
	// listeners waiting to hear what became of theirs look.
	inbox bool
	// inboxRuns are the inbox rows it applied (pginbox_report.go): the
	// other listeners ask for the outcomes of those rows only.
	inboxRuns []idRun

	// keys already listed, while the commit runs
	seenReservations, seenTransactions map[string]struct{}

	// Records the commit created, for the counts in meta: they are added
	// once per commit (writeCounts), not read and written per record.
	newReservations, newTransactions int
}

// writeCounts adds what the commit stored to the counters. The writers call
// it once, after every change of the transaction: the counters are added
// once per commit, not read and written per record.
func (c *Change) writeCounts(tx RepoTx) error {
	d := Tally{Pushes: int64(c.Pushes), Rejected: int64(c.Rejected),
		Reservations: int64(c.newReservations), Transactions: int64(c.newTransactions)}
	if d == (Tally{}) {
		return nil
	}
	return tx.AddTally(d)
}

func (c *Change) addReservation(key string) {
	if c != nil && addKey(&c.seenReservations, key) {
		c.Reservations = append(c.Reservations, key)
	}
}

func (c *Change) addTransaction(key string) {
	if c != nil && addKey(&c.seenTransactions, key) {
		c.Transactions = append(c.Transactions, key)
	}
}

// addKey adds key to the set *seen and reports whether it was new.
func addKey(seen *map[string]struct{}, key string) bool {
	if _, ok := (*seen)[key]; ok {
		return false
	}
	if *seen == nil {
		*seen = map[string]struct{}{}
	}
	(*seen)[key] = struct{}{}
	return true
}
