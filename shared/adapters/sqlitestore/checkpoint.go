package sqlitestore

import (
	"context"
	"database/sql"
	"time"
)

// WAL checkpoints off the writer's path.
//
// In WAL mode SQLite copies the log back into the database file in a
// checkpoint, by default inside the COMMIT of whichever connection pushes the
// log past 1000 pages — here always the one writer connection, so every
// thousandth page a commit also copies pages and fsyncs twice while every
// other writer waits behind it. Measured in the e2e burst of scripts/bench on
// the shared 2-core machine: those commits held the writer for 50–500 ms of
// a 2.5 s run; without them the total commit time fell by a quarter.
//
// So the writer's automatic checkpoint is raised to a safety threshold
// (walAutocheckpointPages: it still bounds the log if the background
// checkpointer cannot keep up), and a goroutine with its own connection runs
// PASSIVE checkpoints after write transactions, at most every
// checkpointInterval. A PASSIVE checkpoint never blocks or waits for the
// writer or readers (sqlite.org/c3ref/wal_checkpoint_v2.html: "Checkpoint as
// many frames as possible without waiting for any database readers or
// writers to finish"); with synchronous=NORMAL in WAL mode the fsyncs happen
// only in checkpoints (sqlite.org/pragma.html#pragma_synchronous), so they
// move off the writer too. Durability is unchanged: a commit is in the WAL
// either way.
const (
	walAutocheckpointPages = 10000 // SQLite's default is 1000
	checkpointInterval     = 50 * time.Millisecond
)

type checkpointer struct {
	db   *sql.DB // one connection of its own (not the writer, not query_only)
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	// ran, if set, is called after each checkpoint (Config.OnCheckpoint).
	ran func(busy, logFrames, checkpointed int, err error)
}

func startCheckpointer(db *sql.DB, ran func(busy, logFrames, checkpointed int, err error)) *checkpointer {
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), ran: ran}
	go c.loop()
	return c
}

// wrote notes a committed write transaction; it never blocks.
func (c *checkpointer) wrote() {
	if c == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		var busy, logFrames, done int
		err := c.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &done)
		if c.ran != nil {
			c.ran(busy, logFrames, done, err)
		}
		t := time.NewTimer(checkpointInterval)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// close stops the goroutine and closes its connection.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	<-c.done
	return c.db.Close()
}
