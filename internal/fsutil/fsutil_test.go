package fsutil

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteAtomic(t *testing.T) {
	for _, sync := range []bool{false, true} {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		for _, content := range []string{"first", "second, longer"} {
			if err := WriteAtomic(p, []byte(content), sync); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); string(got) != content {
				t.Errorf("sync %v: read %q, want %q", sync, got, content)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, TmpPattern)); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
	if err := WriteAtomic(filepath.Join(t.TempDir(), "missing", "f"), nil, true); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(context.Background(), a, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := Lock(context.Background(), b, 30*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("second holder: %v, want ErrLockTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Lock(ctx, b, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v, want context.Canceled", err)
	}
	Unlock(a)
	if err := Lock(context.Background(), b, time.Second); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
}
