package sqlguard_test

import (
	"context"
	"database/sql"
	"errors"
	"log"
	"net/http"

	_ "github.com/go-sql-driver/mysql" // registers "mysql"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/sqlguard"
)

// A holder of a lock on invoice 42 admits its token in the transaction
// that writes the invoice, so that a holder whose lock has since passed
// to someone else writes nothing. (It needs a server, so it only
// compiles.)
func Example() {
	ctx := context.Background()
	db, err := sql.Open("mysql", "app:secret@tcp(db.example.com:3306)/app")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	g, err := sqlguard.New(ctx, db, sqlguard.Config{Dialect: sqlguard.MySQL, Table: "app_fences"})
	if err != nil {
		log.Fatal(err)
	}

	var token fencing.Token = 17 // from the lock: lock.Lock.Token
	pay := func(ctx context.Context) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() // after Commit, a no-op
		if err := g.Admit(ctx, tx, "invoice/42", token); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invoices SET paid = 1 WHERE id = 42`); err != nil {
			return err
		}
		return tx.Commit()
	}
	if err := pay(ctx); errors.Is(err, fencing.ErrStale) {
		log.Print("the lock was lost: someone else owns invoice 42 now")
	} else if err != nil {
		log.Fatal(err)
	}
}

// Guard.Do makes the guard a fencing.Guard, here behind HTTP middleware
// that answers 409 Conflict to a stale token. The handler writes in the
// guard's transaction. On a failure it rolls the transaction back, so that
// nothing commits: MySQL, unlike PostgreSQL, would commit the statements
// that succeeded.
func ExampleGuard_Do() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://app@db.example.com/app")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	g, err := sqlguard.New(ctx, db, sqlguard.Config{Dialect: sqlguard.PostgreSQL})
	if err != nil {
		log.Fatal(err)
	}
	pay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tx := sqlguard.Tx(r.Context())
		if _, err := tx.ExecContext(r.Context(), `UPDATE invoices SET paid = true WHERE id = $1`, r.PathValue("id")); err != nil {
			// A 5xx answer makes the middleware roll the transaction back.
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	resource := func(r *http.Request) string { return "invoice/" + r.PathValue("id") }
	http.Handle("POST /invoices/{id}/pay", fencing.Middleware(g, resource)(pay))
	log.Fatal(http.ListenAndServe(":8080", nil))
}
