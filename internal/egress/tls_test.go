package egress

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHTTPClient_TLSClientConfig: the client uses the TLS configuration it
// is given (here, the CA that trusts the test server) and still checks
// addresses.
func TestHTTPClient_TLSClientConfig(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(ts.Close)
	trusting := ts.Client().Transport.(*http.Transport).TLSClientConfig
	allowed, err := New(Config{AllowedHosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		policy  *Policy
		tls     *tls.Config
		wantErr bool
		refused bool
	}{
		{name: "trusted by the given CA", policy: allowed, tls: trusting},
		{name: "system roots do not trust it", policy: allowed, wantErr: true},
		{name: "the address check still applies", policy: Deny(), tls: trusting, wantErr: true, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.policy.HTTPClient(&HTTPOptions{TLSClientConfig: tt.tls})
			if err != nil {
				t.Fatal(err)
			}
			err = get(t, c, ts.URL)
			if (err != nil) != tt.wantErr {
				t.Fatalf("get: %v; want error %v", err, tt.wantErr)
			}
			var re *RefusedError
			if errors.As(err, &re) != tt.refused {
				t.Errorf("get: %v; want refused %v", err, tt.refused)
			}
		})
	}
}
