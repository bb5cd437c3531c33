package examples_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// block is one ```go block of a Markdown file: a complete program.
type block struct {
	line int    // the line after its opening fence, counted from 1
	code string // its text, without the fences
}

// goBlocks returns the ```go blocks of the Markdown file at path.
func goBlocks(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []block
		cur    *block
		code   strings.Builder
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &block{line: n + 1}
			code.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = code.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			code.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: a ```go block is never closed", path, cur.line-1)
	}
	return blocks
}

// TestREADME_goBlocksBuild builds every ```go block of the repository's
// README.md as a program of its own. Each block becomes the main.go of a
// package of this module that exists only in a go build -overlay, so its
// imports resolve through this module and go.work, and any driver can be
// imported. A //line comment makes a compile error name README.md and its
// line. The programs are built, not run, so no server is needed.
func TestREADME_goBlocksBuild(t *testing.T) {
	readme, err := filepath.Abs(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(filepath.Dir(readme), "go.work")
	if _, err := os.Stat(work); err != nil {
		t.Skipf("no go.work beside README.md (outside the repository?): %v", err)
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build with: %v", err)
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}

	blocks := goBlocks(t, readme)
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go block: the extraction is broken")
	}
	tmp := t.TempDir()
	for i, b := range blocks {
		name := fmt.Sprintf("README.md:%d", b.line)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got, err := format.Source([]byte(b.code)); err == nil && !bytes.Equal(got, []byte(b.code)) {
				t.Errorf("%s: the block is not gofmt-formatted; formatted, it reads:\n%s", name, got)
			}

			src := filepath.Join(tmp, fmt.Sprintf("block%d.go", i))
			text := fmt.Sprintf("//line %s:%d:1\n%s", readme, b.line, b.code)
			if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			pkg := fmt.Sprintf("./internal/readme/block%d", i) // exists only in the overlay
			main := filepath.Join(here, filepath.FromSlash(pkg), "main.go")
			overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{main: src}})
			if err != nil {
				t.Fatal(err)
			}
			overlayFile := filepath.Join(tmp, fmt.Sprintf("overlay%d.json", i))
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}

			cmd := exec.Command(gotool, "build", "-overlay", overlayFile, "-o", os.DevNull, pkg)
			cmd.Dir = here
			cmd.Env = append(os.Environ(), "GOWORK="+work) // also under GOWORK=off: the blocks import modules this one does not require
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("the ```go block at %s does not build (%v):\n%s", name, err, out)
			}
		})
	}
}
