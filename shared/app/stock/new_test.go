package stock

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
)

// Zero fields take their defaults; a missing store is refused with an error
// naming the field.
func TestNewDefaultsAndRefusals(t *testing.T) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "stock.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cases := []struct {
		name string
		cfg  Config
		want string // "" = accepted
	}{
		{"zero settings take the defaults", Config{Store: st}, ""},
		{"no store", Config{}, "Store is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if tc.want != "" {
				if s != nil || !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("New = %v, %v; want Invalid containing %q", s, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := uuid.Parse(s.cfg.NewID()); err != nil {
				t.Errorf("default id: %v", err)
			}
			if loc := s.cfg.Now().Location(); loc != time.UTC {
				t.Errorf("default clock reads %v, want UTC", loc)
			}
		})
	}
}
