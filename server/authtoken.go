package server

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// TokenPrefix starts every static token selmem issues, so that a leaked one
// is recognisable (and secret scanners can be taught it).
const TokenPrefix = "smm_"

// NewStaticToken issues a random static token (256 bits from crypto/rand)
// for user, with groups, a person's or a service's (service). It returns
// the token, to show once, and the configuration entry that keeps only its
// hash.
func NewStaticToken(user string, groups []string, service bool) (string, StaticToken, error) {
	if err := checkUserName(user); err != nil {
		return "", StaticToken{}, fmt.Errorf("user: %w", err)
	}
	for _, g := range groups {
		if strings.TrimSpace(g) == "" || strings.HasPrefix(g, "group:") || strings.ContainsAny(g, " \t\n") {
			return "", StaticToken{}, fmt.Errorf("group %q: write a group name without group: or spaces", g)
		}
	}
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	kind := TokenKindPerson
	if service {
		kind = TokenKindService
	}
	return token, StaticToken{SHA256: HashToken(token), User: user, Groups: slices.Clone(groups), Kind: kind}, nil
}
