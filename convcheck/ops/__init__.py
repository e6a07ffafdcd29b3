"""The ops: one folder each, everything that is about one kernel (its case type, model
revisions, C kernel, torch mapping, targets, known bugs). What an op must provide, and
the registry that finds them, is ``convcheck.registry``; nothing in the core imports a
folder of this package, it asks the registry."""
