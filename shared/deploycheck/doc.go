// Package deploycheck holds no code: its tests check that the deployment
// description — terraform/ (root module and modules/), triggers/triggers.yaml
// and terraform/api/openapi.yaml — is consistent with the code in functions/
// and keeps the deployment's safety rules (no public function, no secret in a
// variable default or an output, terraform fmt layout). They read the
// repository's files only; nothing touches the network.
package deploycheck
