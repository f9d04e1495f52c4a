# slugify.sh - turn free text into URL slugs.
#
# Source this file, then call:  slugify "Some Title"
# The slug is printed on standard output.

# slugify TEXT
# Lower-cases TEXT, turns every run of characters other than a-z and 0-9
# into a single hyphen, and trims hyphens from both ends.
slugify() {
	printf '%s\n' "$1" |
		tr '[:upper:]' '[:lower:]' |
		sed -e 's/[^a-z0-9][^a-z0-9]*/-/g' \
			-e 's/^-//'
}
