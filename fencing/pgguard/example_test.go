package pgguard_test

import (
	"context"
	"errors"
	"log"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/pgguard"
)

// A holder of a lock on invoice 42 admits its token in the transaction
// that writes the invoice, so that a holder whose lock has since passed
// to someone else writes nothing. (It needs a server, so it only
// compiles.)
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.example.com/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	g, err := pgguard.New(ctx, pool, pgguard.Config{Table: "app_fences"})
	if err != nil {
		log.Fatal(err)
	}

	var token fencing.Token = 17 // from the lock: lock.Lock.Token
	pay := func(ctx context.Context) error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) // after Commit, a no-op
		if err := g.Admit(ctx, tx, "invoice/42", token); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE invoices SET paid = true WHERE id = 42`); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	if err := pay(ctx); errors.Is(err, fencing.ErrStale) {
		log.Print("the lock was lost: someone else owns invoice 42 now")
	} else if err != nil {
		log.Fatal(err)
	}
}

// Guard.Do makes the guard a fencing.Guard, here behind HTTP middleware
// that answers 409 Conflict to a stale token; the handler writes in the
// guard's transaction.
func ExampleGuard_Do() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.example.com/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	g, err := pgguard.New(ctx, pool, pgguard.Config{})
	if err != nil {
		log.Fatal(err)
	}
	pay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tx := pgguard.Tx(r.Context())
		if _, err := tx.Exec(r.Context(), `UPDATE invoices SET paid = true WHERE id = $1`, r.PathValue("id")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	resource := func(r *http.Request) string { return "invoice/" + r.PathValue("id") }
	http.Handle("POST /invoices/{id}/pay", fencing.Middleware(g, resource)(pay))
	log.Fatal(http.ListenAndServe(":8080", nil))
}
