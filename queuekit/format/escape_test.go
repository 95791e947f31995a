package format_test

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// escapeCases are cell texts with every character Markdown acts on inside a
// line, alone and in the combinations the notebooks print.
var escapeCases = []struct {
	name, text, escaped string
}{
	{"plain", "plain text 1,157.4", "plain text 1,157.4"},
	{"asterisks (emphasis)", "100,000,000/(24*60*60)", `100,000,000/(24\*60\*60)`},
	{"underscores (emphasis)", "lease_until and _x_", `lease\_until and \_x\_`},
	{"double asterisks (strong)", "**bold**", `\*\*bold\*\*`},
	{"backticks (code span)", "`busy = 0`", "\\`busy = 0\\`"},
	{"less-than (HTML)", "<none> and <b>x</b>", `\<none\> and \<b\>x\</b\>`},
	{"autolink", "<http://x.example>", `\<http://x.example\>`},
	{"brackets (link)", "[3 17] and [a](b)", `\[3 17\] and \[a\](b)`},
	{"image", "![alt](x.png)", `!\[alt\](x.png)`},
	{"ampersand (entity)", "&amp; &lt;", `\&amp; \&lt;`},
	{"tildes (strike-through)", "~~gone~~ ~x~", `\~\~gone\~\~ \~x\~`},
	{"pipe (column)", "a|b", `a\|b`},
	{"backslash", `C:\dir\*`, `C:\\dir\\\*`},
	{"dollar (math)", "$0.625 to $1.25", `\\$0.625 to \\$1.25`},
	{"newlines", "two\nlines\r\nthree\rfour", "two lines three four"},
	{"everything", "a*b_c`d<e[f]g&h~i|j\\k$l", "a\\*b\\_c\\`d\\<e\\[f\\]g\\&h\\~i\\|j\\\\k\\\\$l"},
}

func TestEscapeMarkdownEscapesEveryActiveCharacter(t *testing.T) {
	for _, c := range escapeCases {
		if got := format.EscapeMarkdown(c.text); got != c.escaped {
			t.Errorf("%s: EscapeMarkdown(%q) = %q, want %q", c.name, c.text, got, c.escaped)
		}
	}
}

var (
	cellRE = regexp.MustCompile(`(?s)<td>(.*?)</td>`)
	tagRE  = regexp.MustCompile(`<[^>]*>`)
)

// rendered renders a one-cell table with a CommonMark + GFM renderer and
// returns the cell's text as a reader sees it: tags dropped, entities
// decoded, then MathJax's one rule for text: `\$` shows as "$" (JupyterLab
// hands the page to MathJax after the Markdown renders).
func rendered(t *testing.T, cell string) string {
	t.Helper()
	md := format.Table{Headers: []string{"h"}, Rows: [][]string{{cell}}}.Markdown()
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(md), &out); err != nil {
		t.Fatalf("render %q: %v", md, err)
	}
	m := cellRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no table cell in the rendering of %q:\n%s", md, out.String())
	}
	// GFM turns a bare URL or e-mail address into a link with the same
	// text: that eats nothing, so only formatting counts.
	if strings.Contains(m[1], "<em>") || strings.Contains(m[1], "<strong>") || strings.Contains(m[1], "<code>") || strings.Contains(m[1], "<del>") || strings.Contains(m[1], "<img") {
		t.Errorf("cell %q renders with formatting: %s", cell, m[1])
	}
	return strings.ReplaceAll(html.UnescapeString(tagRE.ReplaceAllString(m[1], "")), `\$`, "$")
}

// Whatever a cell holds, its rendered text is the text itself (newlines
// read as spaces): no character is eaten or turned into formatting.
func TestTableMarkdownRendersEveryCharacterAsGiven(t *testing.T) {
	for _, c := range escapeCases {
		want := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(c.text)
		if got := rendered(t, c.text); got != want {
			t.Errorf("%s: cell %q renders as %q", c.name, c.text, got)
		}
	}
}

// The renderer would eat characters without the escapes: the test above can
// fail. (The row that taught the fix showed "2460*60" with an italic 60.)
func TestUnescapedCellWouldBeEaten(t *testing.T) {
	md := "| h |\n|---|\n| 100,000,000/(24*60*60) |\n"
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "<em>60</em>") {
		t.Errorf("expected the unescaped cell to render an italic 60, got %s", out.String())
	}
}

func FuzzEscapeMarkdownRendersAsGiven(f *testing.F) {
	for _, c := range escapeCases {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Printable ASCII only: a renderer also folds spaces and trims, which
		// is layout, not an eaten character.
		for _, r := range s {
			if r < ' ' || r > '~' {
				return
			}
		}
		if s != strings.TrimSpace(s) || strings.Contains(s, "  ") || strings.Contains(s, `\$`) {
			return
		}
		if got := rendered(t, s); got != s {
			t.Errorf("cell %q renders as %q", s, got)
		}
	})
}
