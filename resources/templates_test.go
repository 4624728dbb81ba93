package resources_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/resources"
)

func TestRegister_Templates(t *testing.T) {
	h := newHarness(t, fixture)
	ctx := context.Background()
	read := func() string {
		t.Helper()
		res, err := h.client.ReadResource(ctx, &sdk.ReadResourceParams{URI: resources.TemplatesURI})
		if err != nil {
			t.Fatal(err)
		}
		return res.Contents[0].Text
	}
	if got := read(); !strings.Contains(got, "No template is published") {
		t.Errorf("without templates:\n%s", got)
	}
	tpl, err := h.store.PublishTemplate(ctx, "sales", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	want := "- sales@1.0.0: Sales analytics (Weekly revenue reporting for the sales team. Second line.); commit " + tpl.Commit[:12] + "\n"
	if got := read(); !strings.Contains(got, want) {
		t.Errorf("templates:\n%s\nwant a line %q", got, want)
	}
}
