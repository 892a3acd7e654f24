// Package text holds ordersaga's two rules for text: which strings the
// system accepts (Valid, Printable, Problem: the SQS message character set,
// see rule.go), and how a text is shortened for storage, errors, logs and
// metrics (Cut, Clip: never inside a UTF-8 sequence, see cut.go).
//
// Every length here counts bytes, not runes (characters): the limits they
// enforce are byte limits (column sizes, queue attribute sizes, log lines).
// A cut keeps only whole characters, so its result may be up to three bytes
// shorter than the limit.
package text
