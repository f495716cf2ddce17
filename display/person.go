package display

// Person is how a person is named to people (SPEC §10 "People by name"):
// "Ada Lovelace (u-1)" when the member has a name, else the id alone.
// The name is shown through Text, so a name is as safe as any other text.
func Person(name, id string) string {
	if name == "" {
		return id
	}
	return Text(name) + " (" + id + ")"
}
