package memstore

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStripCredentials(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		removed []string
		keep    []string // substrings the result keeps
		gone    []string // substrings the result no longer holds
	}{
		{"rest credential", "kind: rest\nurl: https://api.example.com/v1\ncredential: sales-api\n",
			[]string{"credential"}, []string{"url: https://api.example.com/v1"}, []string{"sales-api"}},
		{"sql connection", "kind: sql\nconnection: finance\nquery: SELECT 1\n",
			[]string{"connection"}, []string{"query: SELECT 1"}, []string{"finance"}},
		{"mcp server", "kind: mcp\nserver: crm\ntool: list_deals\narguments:\n  stage: won\n",
			[]string{"server"}, []string{"tool: list_deals", "stage: won"}, []string{"crm"}},
		{"user in a database URL", "kind: postgres\nendpoint: postgres://reporting@db.internal:5432/sales\n",
			[]string{"endpoint (URL credentials)"}, []string{"postgres://db.internal:5432/sales"}, []string{"reporting"}},
		{"secret query parameter", "url: https://x.example/api?region=eu&access_token=TOKEN_NAME\n",
			[]string{"url (URL credentials)"}, []string{"region=eu"}, []string{"TOKEN_NAME"}},
		{"nested auth and headers", "kind: rest\nrequest:\n  headers:\n    X-Api-Key: SALES_KEY\n  auth:\n    env: SALES_TOKEN\n  timeout: 30s\n",
			[]string{"request.headers", "request.auth"}, []string{"timeout: 30s"}, []string{"SALES_KEY", "SALES_TOKEN"}},
		{"keys naming secrets", "client_secret_env: CS\napi_key_name: K\npassword_file: P\nkind: file\n",
			[]string{"client_secret_env", "api_key_name", "password_file"}, []string{"kind: file"}, []string{": CS", ": K\n", ": P\n"}},
		{"in a list", "sources:\n  - name: a\n    credential: c1\n  - name: b\n",
			[]string{"sources[0].credential"}, []string{"name: a", "name: b"}, []string{"c1"}},
		{"comments kept", "# Orders from the shop.\nkind: rest # the shop's API\ncredential: shop\n",
			[]string{"credential"}, []string{"# Orders from the shop.", "# the shop's API"}, []string{"shop\n"}},
		{"nothing to strip", "kind: file\npath: /data/orders.csv\n", nil, []string{"kind: file\npath: /data/orders.csv\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, removed, err := stripCredentials([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.removed, removed); diff != "" {
				t.Errorf("removed (-want +got):\n%s", diff)
			}
			for _, k := range tt.keep {
				if !strings.Contains(string(out), k) {
					t.Errorf("result lost %q:\n%s", k, out)
				}
			}
			for _, g := range tt.gone {
				if strings.Contains(string(out), g) {
					t.Errorf("result still holds %q:\n%s", g, out)
				}
			}
			if len(tt.removed) == 0 && string(out) != tt.in {
				t.Errorf("a file without credentials changed:\n%s", out)
			}
		})
	}
	if _, _, err := stripCredentials([]byte("kind: [")); err == nil {
		t.Error("malformed YAML must be refused")
	}
}
