// Package docs holds the user-facing reference as Markdown; its tests keep
// the pictures and links in it true to the code and the repository.
package docs
