/*
Copyright 2026 The vault-keycloak-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger is the manager's logger from its flags, with fields encoded
// only once a line is written.
//
// Why: controller-runtime gives every reconcile and every webhook request
// a logger with its own fields (controller, object, reconcile ID), and zap
// encodes them as soon as they are added, whether or not anything is
// logged. Most passes log nothing (a refresh in step, a webhook that
// allows), and their loggers were a large part of the manager's garbage
// in a burst (make bench-scale).
func newLogger(opts *zap.Options) logr.Logger {
	opts.ZapOpts = append(opts.ZapOpts, uberzap.WrapCore(func(c zapcore.Core) zapcore.Core { return lazyFields{c} }))
	return zap.New(zap.UseFlagOptions(opts))
}

// lazyFields defers each With's encoding to the first line written
// through it (zapcore.NewLazyWith), and its children's too. A field's
// value is encoded then, as it is then: log values, not pointers to what
// changes later.
type lazyFields struct{ zapcore.Core }

func (c lazyFields) With(fields []zapcore.Field) zapcore.Core {
	return lazyFields{zapcore.NewLazyWith(c.Core, fields)}
}
