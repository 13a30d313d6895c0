package dashboard

import "html/template"

// pageQuery is the query string of a neighbouring page's link, built by url.Values.Encode (or
// url.QueryEscape) so every value in it is already escaped. A page writes it after the "?" of an
// href; as a plain string html/template would escape it a second time there ("=" and "&"
// becoming %3d and %26), and the link would load the first page again.
type pageQuery = template.URL
