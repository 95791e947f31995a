// Package deploy holds no code: its tests load docker-compose.yml with
// compose-go and parse the Dockerfile with buildkit's parser, and check what
// the workshop promises about them. It is a separate module so those parsers'
// dependencies stay out of the workshop module.
package deploy
