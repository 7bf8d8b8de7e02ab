package store

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// The ingest statement's arguments, encoded once into a buffer the batcher
// keeps. Through pgx's Query the three bytea arrays of a batch (about 15
// KB for 24 pushes) went through its reflection-based slice encoder into a
// buffer that pgx gives up after every statement larger than 256 bytes,
// so each batch grew it again from nothing: the encoding, and clearing
// the memory it grew into, took about a tenth of a listener's CPU at
// ingest. The statement is the same, prepared on the connection (as pgx's
// statement cache would), its arguments sent in PostgreSQL's binary array
// form and its rows read from the wire without pgx's scanning.

// ingestStmt names the prepared ingest statement on a connection.
const ingestStmt = "paydesk_inbox_ingest"

// appendByteaArray appends elems as a one-dimensional bytea[] in
// PostgreSQL's binary form (array_recv): dimensions, a no-NULLs flag, the
// element type, the length and lower bound, then each element's length
// and bytes.
func appendByteaArray(b []byte, elems [][]byte) []byte {
	b = binary.BigEndian.AppendUint32(b, 1) // one dimension
	b = binary.BigEndian.AppendUint32(b, 0) // no NULLs
	b = binary.BigEndian.AppendUint32(b, pgtype.ByteaOID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(elems)))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for _, e := range elems {
		b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

// insertBatch runs qIngest over a batch and returns the rows it inserted
// by identity (key and hash). Only the batcher calls it, one batch at a
// time: the buffer is its.
func (ib *inbox) insertBatch(ctx context.Context, keys, hashes, recs [][]byte) (map[string]uint64, error) {
	c, err := ib.db.conn.Pool().Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	sd, err := c.Conn().Prepare(ctx, ingestStmt, qIngest) // once per connection: pgx keeps it
	if err != nil {
		return nil, err
	}
	b := ib.ingestBuf[:0]
	var ends [3]int
	for i, arr := range [3][][]byte{keys, hashes, recs} {
		b = appendByteaArray(b, arr)
		ends[i] = len(b)
	}
	ib.ingestBuf = b
	params := [][]byte{b[:ends[0]], b[ends[0]:ends[1]], b[ends[1]:ends[2]]}
	rr := c.Conn().PgConn().ExecPrepared(ctx, sd.Name, params, []int16{pgtype.BinaryFormatCode}, []int16{pgtype.BinaryFormatCode})
	out := make(map[string]uint64, len(keys))
	var bad error
	for rr.NextRow() {
		v := rr.Values() // id bigint, key bytea, hash bytea
		if len(v) != 3 || len(v[0]) != 8 {
			if bad == nil {
				bad = fmt.Errorf("inbox insert: a returned row of %d columns; want id (8 bytes binary), key, hash", len(v))
			}
			continue
		}
		out[string(v[1])+string(v[2])] = binary.BigEndian.Uint64(v[0])
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	return out, nil
}
