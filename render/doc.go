// Package render turns run events into views: the InteractionModel and its
// pure derivations, terminal text safety, and safe Markdown rendering.
package render
