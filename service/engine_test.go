package service_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// swapFault makes ObjectsSwap fail the way a database can fail around
// COMMIT. This is a fault injected at the store interface: the real store
// runs (or not) underneath, so the stored state is real.
type swapFault int

const (
	// faultNone lets swaps through.
	faultNone swapFault = iota
	// faultBeforeCommit fails before anything is sent: nothing lands.
	faultBeforeCommit
	// faultCommitLost runs the swap, then reports the connection lost at
	// COMMIT: the change landed but the server cannot know it.
	faultCommitLost
	// faultCommitNotLanded reports the connection lost at COMMIT without
	// running the swap: the change did not land, the server cannot know it.
	faultCommitNotLanded
)

type faultStore struct {
	store.Store
	fault swapFault
	// createLost makes ObjectCreate run and then report its COMMIT lost.
	createLost bool
}

func (f *faultStore) ObjectCreate(ctx context.Context, o *store.Object) error {
	if err := f.Store.ObjectCreate(ctx, o); err != nil || !f.createLost {
		return err
	}
	return fmt.Errorf("%w: %s: %w", store.ErrOutcomeUnknown, driverText, context.DeadlineExceeded)
}

// driverText stands for what a driver puts in its errors (addresses, SQL).
const driverText = "dial tcp 10.1.2.3:5432: connection reset (SQLSTATE 08006)"

func (f *faultStore) ObjectsSwap(ctx context.Context, swaps []store.Swap) error {
	switch f.fault {
	case faultBeforeCommit:
		return errors.New(driverText)
	case faultCommitLost:
		if err := f.Store.ObjectsSwap(ctx, swaps); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s", store.ErrOutcomeUnknown, driverText)
	case faultCommitNotLanded:
		return fmt.Errorf("%w: %s", store.ErrOutcomeUnknown, driverText)
	}
	return f.Store.ObjectsSwap(ctx, swaps)
}

// openStore opens an empty store of the given backend ("sqlite" or
// "postgres"), closed when the test ends.
func openStore(t *testing.T, backend string) *sqlstore.Store {
	ctx := context.Background()
	var st *sqlstore.Store
	var err error
	if backend == "postgres" {
		st, err = sqlstore.OpenPostgres(ctx, pgtest.NewDatabase(t), true)
	} else {
		st, err = sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	}
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

type engineFixture struct {
	svc    *service.Service
	faults *faultStore
	dir    string
}

func newEngineFixture(t *testing.T, backend string) *engineFixture {
	ctx := context.Background()
	fs := &faultStore{Store: openStore(t, backend)}
	svc := service.New(fs, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	dir := t.TempDir()
	_, err := svc.CreateWarehouse(ctx, "wh", "file://"+dir, nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	_, err = svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{
		Name:   "t",
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`),
	})
	require.NoError(t, err)
	return &engineFixture{svc: svc, faults: fs, dir: dir}
}

// metadataFiles lists the metadata files under the warehouse.
func (fx *engineFixture) metadataFiles(t *testing.T) []string {
	var out []string
	err := filepath.WalkDir(fx.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".metadata.json") {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	return out
}

func setProp(v string) service.TableChange {
	return service.TableChange{
		Ident:   service.Ident{Namespace: []string{"ns"}, Name: "t"},
		Updates: []byte(`[{"action":"set-properties","updates":{"k":"` + v + `"}}]`),
	}
}

// TestCommitOutcomeContract injects failures around COMMIT and checks that
// what the client is told matches what is stored: 409 only when nothing
// landed (and the new metadata file is gone), CommitStateUnknown when
// COMMIT failed (files kept: the commit may reference them), and no driver
// text in any message.
func TestCommitOutcomeContract(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			fx := newEngineFixture(t, backend)
			id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
			prop := func() string {
				res, err := fx.svc.Tables().LoadTable(ctx, "wh", id, "", service.NoDelegation)
				require.NoError(t, err, "the table still loads")
				if strings.Contains(string(res.Metadata), `"k":"`) {
					return strings.SplitN(strings.SplitN(string(res.Metadata), `"k":"`, 2)[1], `"`, 2)[0]
				}
				return ""
			}
			files := len(fx.metadataFiles(t))

			fx.faults.fault = faultBeforeCommit
			_, err := fx.svc.CommitTable(ctx, "wh", setProp("before"))
			require.Equal(t, fault.CommitFailed, fault.KindOf(err), "%v", err)
			require.NotContains(t, err.Error(), "SQLSTATE")
			require.NotContains(t, err.Error(), "10.1.2.3")
			require.Equal(t, "", prop(), "409: nothing landed")
			require.Len(t, fx.metadataFiles(t), files, "the unreferenced metadata file was removed")

			fx.faults.fault = faultCommitNotLanded
			_, err = fx.svc.CommitTable(ctx, "wh", setProp("unknown-not-landed"))
			require.Equal(t, fault.CommitStateUnknown, fault.KindOf(err), "%v", err)
			require.NotContains(t, err.(*fault.Error).Message, "SQLSTATE")
			require.Equal(t, "", prop())
			require.Len(t, fx.metadataFiles(t), files+1, "files of an unknown outcome are kept")

			fx.faults.fault = faultCommitLost
			_, err = fx.svc.CommitTable(ctx, "wh", setProp("unknown-landed"))
			require.Equal(t, fault.CommitStateUnknown, fault.KindOf(err), "%v", err)
			require.Equal(t, "unknown-landed", prop(), "the commit landed although the client was told unknown")
			res, err := fx.svc.Tables().LoadTable(ctx, "wh", id, "", service.NoDelegation)
			require.NoError(t, err)
			_, statErr := os.Stat(strings.TrimPrefix(res.MetadataLocation, "file://"))
			require.NoError(t, statErr, "the landed commit's metadata file was kept")

			fx.faults.fault = faultNone
			_, err = fx.svc.CommitTable(ctx, "wh", setProp("after"))
			require.NoError(t, err, "the table still commits")
			require.Equal(t, "after", prop())
		})
	}
}

// TestViewAndTransactionCommitsShareTheOutcomeContract checks the same
// contract through the view and multi-table paths of the engine.
func TestViewAndTransactionCommitsShareTheOutcomeContract(t *testing.T) {
	ctx := context.Background()
	fx := newEngineFixture(t, "sqlite")
	_, err := fx.svc.Views().Create(ctx, "wh", []string{"ns"}, service.CreateViewInput{
		Name:        "v",
		Schema:      []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`),
		ViewVersion: []byte(`{"version-id":1,"schema-id":0,"timestamp-ms":1,"summary":{},"default-namespace":["ns"],"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}`),
	})
	require.NoError(t, err)
	vid := service.Ident{Namespace: []string{"ns"}, Name: "v"}
	up := []byte(`[{"action":"set-properties","updates":{"k":"v"}}]`)

	fx.faults.fault = faultBeforeCommit
	_, err = fx.svc.Views().Replace(ctx, "wh", vid, nil, up)
	require.Equal(t, fault.CommitFailed, fault.KindOf(err), "%v", err)
	require.NotContains(t, err.Error(), "SQLSTATE")
	err = fx.svc.TableCommits().CommitTransaction(ctx, "wh", []service.TableChange{setProp("tx")})
	require.Equal(t, fault.CommitFailed, fault.KindOf(err), "%v", err)

	fx.faults.fault = faultCommitNotLanded
	_, err = fx.svc.Views().Replace(ctx, "wh", vid, nil, up)
	require.Equal(t, fault.CommitStateUnknown, fault.KindOf(err), "%v", err)
	err = fx.svc.TableCommits().CommitTransaction(ctx, "wh", []service.TableChange{setProp("tx")})
	require.Equal(t, fault.CommitStateUnknown, fault.KindOf(err), "%v", err)

	fx.faults.fault = faultNone
	res, err := fx.svc.Views().Replace(ctx, "wh", vid, nil, up)
	require.NoError(t, err)
	require.Contains(t, string(res.Metadata), `"k":"v"`)
}

// TestCreateWhoseCommitWasLostKeepsItsMetadata: a create whose COMMIT
// answer was lost (it landed) is answered CommitStateUnknown, and the
// metadata file the new pointer names is kept, so the table loads.
// Deleting it, as for a create that failed, would leave a table whose
// every load is a 404 for its own metadata file.
func TestCreateWhoseCommitWasLostKeepsItsMetadata(t *testing.T) {
	ctx := context.Background()
	fx := newEngineFixture(t, "sqlite")
	fx.faults.createLost = true
	_, err := fx.svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{
		Name:   "lost",
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`),
	})
	require.Equal(t, fault.CommitStateUnknown, fault.KindOf(err), "%v", err)
	require.NotContains(t, err.(*fault.Error).Message, "SQLSTATE")
	fx.faults.createLost = false
	res, err := fx.svc.Tables().LoadTable(ctx, "wh", service.Ident{Namespace: []string{"ns"}, Name: "lost"}, "", service.NoDelegation)
	require.NoError(t, err, "the created table loads")
	_, statErr := os.Stat(strings.TrimPrefix(res.MetadataLocation, "file://"))
	require.NoError(t, statErr, "its metadata file was kept")
}
