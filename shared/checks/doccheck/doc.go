// Package doccheck holds the tests that keep the documentation true to the
// code: docs/configuration.md must list every environment variable the code
// reads (the configuration reader's calls in shared/kit/config, every os.Getenv
// and env-reading helper in the module, the scripts' ${NAME:-default}
// settings), and every relative link in README.md, docs/*.md and
// terraform/README.md must point to an existing file and, for a Markdown
// target, an existing heading anchor.
//
// The package has no code of its own; run it with
//
//	go test ./shared/checks/doccheck/
package doccheck
