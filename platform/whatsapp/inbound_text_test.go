package whatsapp

// TextContent is for the decoding tests: only they read a message's text through it.

// TextContent returns the text a user typed or chose: the body of a text message,
// the text of a template quick-reply button, or the title of an interactive button
// or list reply. It returns "" for every other type.
func (m InboundMessage) TextContent() string {
	switch m.Type {
	case TypeText:
		if m.Text != nil {
			return m.Text.Body
		}
	case TypeButton:
		if m.Button != nil {
			return m.Button.Text
		}
	case TypeInteractive:
		if m.Interactive == nil {
			return ""
		}
		if m.Interactive.ButtonReply != nil {
			return m.Interactive.ButtonReply.Title
		}
		if m.Interactive.ListReply != nil {
			return m.Interactive.ListReply.Title
		}
	}
	return ""
}
