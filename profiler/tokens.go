package profiler

import (
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts tokens with the cl100k_base encoding. The BPE ranks are
// embedded in the binary (offline loader); nothing is downloaded.
type Counter struct{ enc *tiktoken.Tiktoken }

var (
	counterOnce sync.Once
	counter     *Counter
	counterErr  error
)

// NewCounter returns the shared cl100k_base counter.
func NewCounter() (*Counter, error) {
	counterOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		enc, err := tiktoken.GetEncoding("cl100k_base")
		if err != nil {
			counterErr = err
			return
		}
		counter = &Counter{enc: enc}
	})
	return counter, counterErr
}

// Count returns the number of cl100k_base tokens in s. Text that looks
// like a special token ("<|endoftext|>") counts as ordinary text, as it
// does in a prompt; the encoder's ordinary path skips the search for
// special tokens, which took over half the time.
func (c *Counter) Count(s string) int { return len(c.enc.EncodeOrdinary(s)) }

// Tokens counts cl100k_base tokens in s. It panics only if the embedded
// encoding cannot be loaded, which is a build defect.
func Tokens(s string) int {
	c, err := NewCounter()
	if err != nil {
		panic("profiler: loading embedded cl100k_base: " + err.Error())
	}
	return c.Count(s)
}
