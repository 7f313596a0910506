// Package kubernetes holds no code: this directory is storebench's
// Kubernetes deployment (a scenario ConfigMap, an Indexed Job of shards,
// collect.sh and the image's Dockerfile), and its tests keep the manifests
// valid Kubernetes objects that fit together, and the pods' log output
// something collect.sh can cut and storebench can merge.
package kubernetes
