package memstore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// A steward drafts a change to a shared workspace; others read the
// published version until the steward publishes.
func ExampleStore_Publish() {
	home, _ := os.MkdirTemp("", "selmem-example-")
	defer os.RemoveAll(home)
	ctx := context.Background() // no principal: the local owner
	s, err := memstore.Open(ctx, home, &memstore.Options{Durability: memstore.DurabilityOS})
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)
	_, _ = s.Create(ctx, "/memories/workspaces/sales/workspace.yaml", "acl:\n  stewards: [steve]\n  viewers: [vera]\n", nil)
	_, _ = s.Create(ctx, "/memories/workspaces/sales/task.md", "Report revenue.\n", nil)

	steve := access.WithPrincipal(ctx, access.Principal{User: "steve", Kind: access.KindPerson})
	vera := access.WithPrincipal(ctx, access.Principal{User: "vera", Kind: access.KindPerson})
	if _, err := s.OpenDraft(steve, "sales"); err != nil {
		panic(err)
	}
	_, _ = s.StrReplace(steve, "/memories/workspaces/sales/task.md", "revenue", "margin", nil)
	read := func(ctx context.Context) string {
		b, _, _ := s.Read(ctx, "/memories/workspaces/sales/task.md")
		return string(b)
	}
	fmt.Print("steve: ", read(steve), "vera:  ", read(vera))
	if _, err := s.Publish(steve, "sales", "margin, not revenue"); err != nil {
		panic(err)
	}
	fmt.Print("vera after publish: ", read(vera))
	// Output:
	// steve: Report margin.
	// vera:  Report revenue.
	// vera after publish: Report margin.
}
