// Package bucket computes the bucket column of the tables whose list
// indexes would otherwise start with a low-cardinality state followed by a
// time (sagas, idempotency_keys; schema/ydb/0013_buckets.sql). The column
// spreads those index keys over N prefixes, so writes land in N index
// partitions instead of one (docs/ydb.md, "Indexes").
//
// The value is a pure function of the row's primary key, so it never
// changes while the row exists. Both adapters write it on insert (the
// SQLite twin stores it too, so the tables stay column-for-column alike);
// only the YDB adapter reads by it.
package bucket

import "hash/fnv"

// N is the number of buckets. The YDB list queries read every bucket
// 0..N-1 plus NULL (rows written before the column existed), so N may grow
// (rows keep their old, smaller bucket, which is still read) but must never
// shrink: rows in a bucket >= N would no longer be listed.
const N = 8

// Of returns the bucket of the primary key made of parts: FNV-1a (32 bits)
// of the parts joined by a zero byte, mod N. It is always in [0, N).
func Of(parts ...string) int64 {
	h := fnv.New32a()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(p))
	}
	return int64(h.Sum32() % N)
}
