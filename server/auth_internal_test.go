package server

import "testing"

func TestIsLoopbackAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"LOCALHOST:1", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"10.0.0.5:8080", false},
		{"selmem.internal:8080", false},
		{"localhost.example.com:80", false},
		{"127.0.0.1", false}, // no port: not an address Listen accepts
	}
	for _, tt := range tests {
		if got := isLoopbackAddr(tt.addr); got != tt.want {
			t.Errorf("isLoopbackAddr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestClaims(t *testing.T) {
	claims := map[string]any{
		"sub":          "u1",
		"realm_access": map[string]any{"roles": []any{"a", "b", 3}},
		"group":        "solo",
	}
	if got := claim(claims, "realm_access.roles"); len(claimStrings(got)) != 2 {
		t.Errorf("nested claim: %v", got)
	}
	if got := claimStrings(claim(claims, "group")); len(got) != 1 || got[0] != "solo" {
		t.Errorf("string claim: %v", got)
	}
	if got := claim(claims, "sub.x"); got != nil {
		t.Errorf("path through a string: %v", got)
	}
	if got := claimStrings(claim(claims, "missing")); got != nil {
		t.Errorf("missing claim: %v", got)
	}
}
