package store

type batcher struct{ db *DB }

func newBatcher(db *DB) *batcher { return &batcher{db: db} }

func (b *batcher) close() {}
