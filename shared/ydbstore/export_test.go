package ydbstore

// Exported for the package's external tests (package ydbstore_test), which
// drive the use cases over the fake server.
var (
	OutboxColumns = outboxColumns
)
