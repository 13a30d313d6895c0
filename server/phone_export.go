package server

// NormalizeMobile is the number normalisation POST /contacts applies, for the operator
// commands: digits only (+ spaces dashes dots parentheses dropped, a leading 00 too); ok is
// false unless 8 to 15 digits remain and the first is not 0.
func NormalizeMobile(in string) (digits string, ok bool) { return normalizeMobile(in) }
