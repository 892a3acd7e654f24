package ydbstore

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/ydb-platform/ydb-go-genproto/Ydb_Discovery_V1"
	"github.com/ydb-platform/ydb-go-genproto/Ydb_Query_V1"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Discovery"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Issue"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Operations"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Query"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"
)

// FakeYDB is a gRPC server that speaks YDB's Discovery and Query services
// (the protos of ydb-go-genproto) to the real SDK, for the adapter's
// server-free tests. It is not YDB: it stores nothing and executes
// nothing. It records every RPC the SDK sends (with the query text and the
// bound parameters), runs the statement check (checkYQL against the
// migrated schema and the bound types) on every text, and answers every
// query with the rows Answer returns, or else with the rows it echoes
// (fakeydb_rows_test.go: a point read by primary key sees the values an
// earlier write bound) or empty result sets. A text
// the check refuses is answered as a server would refuse it: status
// GENERIC_ERROR with the check's issues, and a test error.
type FakeYDB struct {
	Ydb_Discovery_V1.UnimplementedDiscoveryServiceServer
	Ydb_Query_V1.UnimplementedQueryServiceServer

	// DSN is the connection string of the fake (grpc://127.0.0.1:port/local).
	DSN string
	// Answer, if set, returns the result sets of a query (nil: empty ones).
	Answer func(text string, params map[string]*Ydb.TypedValue) []*Ydb.ResultSet
	// Refuse, if set, answers a query with a failure status and issue
	// message instead (ok false: answered normally).
	Refuse func(r FakeRPC) (status Ydb.StatusIds_StatusCode, message string, ok bool)

	t      *testing.T
	tables map[string]table
	mu     sync.Mutex
	rpcs   []FakeRPC
	nextID int
	rows   map[string]map[string]echoRow // table → key → row (fakeydb_rows_test.go)
}

// FakeRPC is one recorded call.
type FakeRPC struct {
	Method string // CreateSession, AttachSession, ExecuteQuery, CommitTransaction, ...
	Text   string // ExecuteQuery: the query text
	Params map[string]string
	// Begin, Commit: the TxControl of an ExecuteQuery begins a transaction
	// (lazy begin) or commits it; Snapshot: it is a snapshot read-only one.
	Begin, Commit, Snapshot bool
	// RU is the request's I/O estimate (fakeydb_ru_test.go); RUBy splits
	// its units by table, index and guard (estimateRUBy).
	RU   RU
	RUBy map[string]int
}

// StartFakeYDB starts a FakeYDB on a loopback port for the test's lifetime.
func StartFakeYDB(t *testing.T) *FakeYDB {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &FakeYDB{t: t, tables: schemaTables(t), DSN: "grpc://" + lis.Addr().String() + "/local"}
	srv := grpc.NewServer()
	Ydb_Discovery_V1.RegisterDiscoveryServiceServer(srv, f)
	Ydb_Query_V1.RegisterQueryServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return f
}

// Take returns the RPCs recorded since the last Take and starts afresh.
func (f *FakeYDB) Take() []FakeRPC {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.rpcs
	f.rpcs = nil
	return out
}

func (f *FakeYDB) record(r FakeRPC) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rpcs = append(f.rpcs, r)
}

func (f *FakeYDB) id(prefix string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	return fmt.Sprintf("%s-%d", prefix, f.nextID)
}

var success = Ydb.StatusIds_SUCCESS

// ListEndpoints names the fake itself as the database's one endpoint.
func (f *FakeYDB) ListEndpoints(_ context.Context, req *Ydb_Discovery.ListEndpointsRequest) (*Ydb_Discovery.ListEndpointsResponse, error) {
	host, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(f.DSN, "grpc://"), "/local"))
	var p uint32
	fmt.Sscan(port, &p)
	res, err := anypb.New(&Ydb_Discovery.ListEndpointsResult{Endpoints: []*Ydb_Discovery.EndpointInfo{{
		Address: host, Port: p, NodeId: 1, Service: []string{"query_service", "discovery"},
	}}})
	if err != nil {
		return nil, err
	}
	return &Ydb_Discovery.ListEndpointsResponse{Operation: &Ydb_Operations.Operation{
		Ready: true, Status: success, Result: res,
	}}, nil
}

func (f *FakeYDB) CreateSession(context.Context, *Ydb_Query.CreateSessionRequest) (*Ydb_Query.CreateSessionResponse, error) {
	f.record(FakeRPC{Method: "CreateSession"})
	return &Ydb_Query.CreateSessionResponse{Status: success, SessionId: f.id("session"), NodeId: 1}, nil
}

func (f *FakeYDB) DeleteSession(context.Context, *Ydb_Query.DeleteSessionRequest) (*Ydb_Query.DeleteSessionResponse, error) {
	f.record(FakeRPC{Method: "DeleteSession"})
	return &Ydb_Query.DeleteSessionResponse{Status: success}, nil
}

// AttachSession reports the session alive and keeps the stream open until
// the client leaves.
func (f *FakeYDB) AttachSession(_ *Ydb_Query.AttachSessionRequest, s Ydb_Query_V1.QueryService_AttachSessionServer) error {
	f.record(FakeRPC{Method: "AttachSession"})
	if err := s.Send(&Ydb_Query.SessionState{Status: success}); err != nil {
		return err
	}
	<-s.Context().Done()
	return nil
}

func (f *FakeYDB) BeginTransaction(context.Context, *Ydb_Query.BeginTransactionRequest) (*Ydb_Query.BeginTransactionResponse, error) {
	f.record(FakeRPC{Method: "BeginTransaction"})
	return &Ydb_Query.BeginTransactionResponse{Status: success, TxMeta: &Ydb_Query.TransactionMeta{Id: f.id("tx")}}, nil
}

func (f *FakeYDB) CommitTransaction(context.Context, *Ydb_Query.CommitTransactionRequest) (*Ydb_Query.CommitTransactionResponse, error) {
	f.record(FakeRPC{Method: "CommitTransaction"})
	return &Ydb_Query.CommitTransactionResponse{Status: success}, nil
}

func (f *FakeYDB) RollbackTransaction(context.Context, *Ydb_Query.RollbackTransactionRequest) (*Ydb_Query.RollbackTransactionResponse, error) {
	f.record(FakeRPC{Method: "RollbackTransaction"})
	return &Ydb_Query.RollbackTransactionResponse{Status: success}, nil
}

// ExecuteQuery records the text and parameters, checks them, and answers
// with one part per result set (the first carrying the transaction meta
// when the TxControl began a transaction).
func (f *FakeYDB) ExecuteQuery(req *Ydb_Query.ExecuteQueryRequest, s Ydb_Query_V1.QueryService_ExecuteQueryServer) error {
	text := req.GetQueryContent().GetText()
	bound := map[string]string{}
	for n, v := range req.GetParameters() {
		bound[n] = typeYQL(v.GetType())
	}
	tc := req.GetTxControl()
	r := FakeRPC{Method: "ExecuteQuery", Text: text, Params: bound, Commit: tc.GetCommitTx(),
		Begin: tc.GetBeginTx() != nil, Snapshot: tc.GetBeginTx().GetSnapshotReadOnly() != nil}
	if issues := checkYQL(text, bound, f.tables); len(issues) > 0 {
		f.t.Errorf("fake YDB: the server would refuse this text:\n  %s\n%s", strings.Join(issues, "\n  "), text)
		f.record(r)
		return s.Send(&Ydb_Query.ExecuteQueryResponsePart{Status: Ydb.StatusIds_GENERIC_ERROR,
			Issues: []*Ydb_Issue.IssueMessage{{Message: strings.Join(issues, "; ")}}})
	}
	if f.Refuse != nil {
		if st, msg, ok := f.Refuse(r); ok {
			f.record(r)
			return s.Send(&Ydb_Query.ExecuteQueryResponsePart{Status: st,
				Issues: []*Ydb_Issue.IssueMessage{{Message: msg}}})
		}
	}
	var sets []*Ydb.ResultSet
	if f.Answer != nil {
		sets = f.Answer(text, req.GetParameters())
	}
	answered := sets != nil
	for _, st := range splitYQL(text) {
		if st.kind == "SELECT" && !answered {
			rs, ok := f.echoRead(st, req.GetParameters())
			if !ok {
				rs = &Ydb.ResultSet{}
			}
			sets = append(sets, rs)
		}
	}
	r.RU, r.RUBy = f.estimateRUBy(text, req.GetParameters(), sets)
	f.record(r)
	for _, st := range splitYQL(text) {
		switch st.kind {
		case "INSERT", "UPSERT", "UPDATE":
			f.echoWrite(st, req.GetParameters())
		}
	}
	// As KQP answers (ydb/core/kqp/session_actor, FillTxInfo): every
	// response carries the transaction's id, empty once the query
	// committed; the gRPC layer puts it on the last part.
	meta := &Ydb_Query.TransactionMeta{}
	if !r.Commit && (r.Begin || tc.GetTxId() != "") {
		meta.Id = tc.GetTxId()
		if r.Begin {
			meta.Id = f.id("tx")
		}
	}
	if len(sets) == 0 {
		return s.Send(&Ydb_Query.ExecuteQueryResponsePart{Status: success, TxMeta: meta})
	}
	for i, rs := range sets {
		part := &Ydb_Query.ExecuteQueryResponsePart{Status: success, ResultSetIndex: int64(i), ResultSet: rs}
		if i == len(sets)-1 {
			part.TxMeta = meta
		}
		if err := s.Send(part); err != nil {
			return err
		}
	}
	return nil
}

// typeYQL writes a protobuf type as the SDK's types write it in YQL
// (Optional<Timestamp>, List<Struct<'id':Utf8,...>>), spaces removed.
func typeYQL(t *Ydb.Type) string {
	switch x := t.GetType().(type) {
	case *Ydb.Type_TypeId:
		switch x.TypeId {
		case Ydb.Type_UTF8:
			return "Utf8"
		case Ydb.Type_STRING:
			return "String"
		case Ydb.Type_JSON:
			return "Json"
		}
		s := strings.ToLower(x.TypeId.String())
		return strings.ToUpper(s[:1]) + s[1:]
	case *Ydb.Type_OptionalType:
		return "Optional<" + typeYQL(x.OptionalType.GetItem()) + ">"
	case *Ydb.Type_ListType:
		return "List<" + typeYQL(x.ListType.GetItem()) + ">"
	case *Ydb.Type_StructType:
		var parts []string
		for _, m := range x.StructType.GetMembers() {
			parts = append(parts, "'"+m.GetName()+"':"+typeYQL(m.GetType()))
		}
		return "Struct<" + strings.Join(parts, ",") + ">"
	}
	return fmt.Sprintf("?%v", t)
}
