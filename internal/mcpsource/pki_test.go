package mcpsource

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pki is a CA made for one test, with a server certificate for 127.0.0.1
// and a client certificate, the CA and the client's pair written as PEM
// files.
type pki struct {
	ca                        *x509.Certificate
	caKey                     *ecdsa.PrivateKey
	server                    tls.Certificate
	caFile, certFile, keyFile string
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	p := &pki{}
	var caDER []byte
	p.ca, p.caKey, caDER = p.issue(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "mcpsource test CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	})
	serverCert, serverKey, serverDER := p.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature,
	})
	p.server = tls.Certificate{Certificate: [][]byte{serverDER}, PrivateKey: serverKey, Leaf: serverCert}
	_, clientKey, clientDER := p.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "selmem"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature,
	})
	keyDER, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	p.caFile = writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER)
	p.certFile = writePEM(t, filepath.Join(dir, "client.pem"), "CERTIFICATE", clientDER)
	p.keyFile = writePEM(t, filepath.Join(dir, "client-key.pem"), "EC PRIVATE KEY", keyDER)
	return p
}

// issue makes a key and a certificate from tmpl, signed by the CA (or by
// itself when there is no CA yet).
func (p *pki) issue(t *testing.T, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(time.Hour)
	parent, signer := tmpl, key
	if p.ca != nil {
		parent, signer = p.ca, p.caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, der
}

// serverTLS requires a client certificate issued by the CA.
func (p *pki) serverTLS(t *testing.T) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
	}
}

func writePEM(t *testing.T, path, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
