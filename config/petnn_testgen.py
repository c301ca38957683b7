#!/usr/bin/python3
"""Bridge from PETSc's /*TEST ... TEST*/ blocks to CTest.

Parses every source file given with PETSc's own parser (testparse.py from the
PETSc examples/config directory) and writes

  * one bash descriptor per test case (<bindir>/testdefs/<dir>/<name>.sh), read
    by config/petnn_runtest.sh, and
  * one CMake file with the add_test()/set_tests_properties() calls.

Test names are <dir>/<exe>_<suffix> (<dir>/<exe>_1 when the test has no
suffix), e.g. tests/dense_1, examples/nnrun_mlp.  The expected output is
<srcdir>/output/<exe>_<suffix>.out (<exe>_1.out or <exe>.out without a suffix)
unless the block sets output_file:.

Everything that depends on the machine (requires:) is resolved here, at
configure time, except datafilespath, which the runner checks at run time.
"""

import argparse
import itertools
import os
import re
import shlex
import sys


def load_testparse(confdir):
    # testparse does 'from gmakegen import *': both live in the same directory
    sys.path.insert(0, os.path.abspath(confdir))
    import testparse  # noqa: E402
    return testparse


# ----------------------------------------------------------------------------- requirements
def read_petscconf(path):
    conf = {}
    if path and os.path.isfile(path):
        with open(path) as fh:
            for line in fh:
                m = re.match(r'\s*#define\s+(\w+)\s*(.*)$', line)
                if m:
                    conf[m.group(1)] = m.group(2).strip()
    return conf


PRECISIONS = {'single', 'double', '__float128', '__fp16'}


def requirement_failure(req, conf, features):
    """None when req is satisfied, else a reason string."""
    neg = req.startswith('!')
    name = req[1:] if neg else req
    low = name.lower()

    def result(have, what):
        if have and neg:
            return 'not %s required' % what
        if not have and not neg:
            return '%s required' % what
        return None

    if low in PRECISIONS:
        return result('PETSC_USE_REAL_' + low.upper().lstrip('_') in conf or
                      'PETSC_USE_REAL_' + low.upper() in conf, name)
    if low in ('int32', 'int64'):
        is64 = 'PETSC_USE_64BIT_INDICES' in conf
        return result(is64 == (low == 'int64'), name)
    if re.match(r'long\d+$', low):
        return result(int(conf.get('PETSC_SIZEOF_LONG', '8')) == int(low[4:]) // 8, name)
    if low == 'datafilespath':
        return None  # checked at run time by the runner
    if 'defined(' in low:
        macro = name.split('(')[1].split(')')[0]
        return result(macro in conf or macro in features, name)
    if low in features:
        return result(True, name)
    if low in ('complex', 'debug'):
        return result('PETSC_USE_' + low.upper() in conf, name)
    have = ('PETSC_HAVE_' + low.upper() in conf) or ('PETNN_HAVE_' + low.upper() in conf)
    return result(have, name)


def requirements_failures(reqs, conf, features):
    reasons = []
    for r in reqs.split():
        why = requirement_failure(r.strip(), conf, features)
        if why and why not in reasons:
            reasons.append(why)
    return reasons


# ----------------------------------------------------------------------------- loops {{...}}
LOOP_RE = re.compile(r'\{\{(.*?)\}([^}]*)\}')
ARG_SPLIT = re.compile(r' (?=-[a-zA-Z])')


def expand_loops(args):
    """'-a 1 -b {{x y}} -c 2' -> ['-a 1 -b x -c 2', '-a 1 -b y -c 2'] (shared loops)."""
    if '{{' not in args:
        return [args.strip()]
    pieces = []
    for varset in ARG_SPLIT.split(args.strip()):
        m = LOOP_RE.search(varset)
        if m:
            head = varset[:m.start()]
            tail = varset[m.end():]
            pieces.append([head + v + tail for v in m.group(1).split()])
        else:
            pieces.append([varset])
    return [' '.join(p).strip() for p in itertools.product(*pieces)]


def expand_nsize(nsize):
    nsize = (nsize or '1').strip()
    m = LOOP_RE.search(nsize)
    vals = m.group(1).split() if m else nsize.split()
    for v in vals:
        if not v.isdigit() or int(v) < 1:
            raise ValueError('bad nsize: %r' % nsize)
    return [int(v) for v in vals]


# ----------------------------------------------------------------------------- one test case
APPEND = ('args', 'diff_args', 'requires', 'env', 'localrunfiles')


def merge_subtest(parent, sub):
    d = {k: v for k, v in parent.items() if k != 'subtests' and not re.match(r'test\d+$', k)}
    for k, v in sub.items():
        if k in APPEND and d.get(k):
            d[k] = d[k] + ' ' + v
        else:
            d[k] = v
    return d


def strip_error_prefix(flt):
    # PETSc uses str.lstrip("Error:"), which strips a character set; strip the prefix only
    if flt.startswith('Error:'):
        return True, flt[len('Error:'):].strip()
    return False, flt


def output_candidates(srcdir, name, exe, has_suffix, output_file):
    if output_file:
        base = [output_file]
    else:
        base = ['output/%s.out' % name]
        if not has_suffix:
            base.append('output/%s.out' % exe)
    cands = []
    for b in base:
        cands.append(b)
        root = b[:-4] if b.endswith('.out') else b
        cands.append(root + '_alt.out')
        cands += ['%s_alt_%d.out' % (root, i) for i in range(2, 9)]
    return [os.path.join(srcdir, c) for c in cands]


def make_runs(entry):
    """List of per-run dicts for one test case (subtests x shared loops)."""
    if entry.get('subtests'):
        variants = [merge_subtest(entry, entry[s]) for s in entry['subtests']]
    else:
        variants = [dict(entry)]
    runs = []
    for v in variants:
        flt = v.get('filter', '')
        error, flt = strip_error_prefix(flt)
        for nsize in expand_nsize(v.get('nsize', '1')):
            for args in expand_loops(v.get('args', '')):
                runs.append({
                    'nsize': nsize,
                    'args': args,
                    'filter': flt,
                    'filter_output': v.get('filter_output', ''),
                    'diff_args': v.get('diff_args', ''),
                    'env': v.get('env', ''),
                    'command': v.get('command', ''),
                    'error': 1 if error else 0,
                    'output_file': v.get('output_file', ''),
                    'localrunfiles': v.get('localrunfiles', ''),
                })
    return runs, variants


def q(s):
    return shlex.quote(str(s))


def bash_array(name, values):
    return '%s=(%s)\n' % (name, ' '.join(q(v) for v in values))


def cmake_quote(s):
    return '"' + str(s).replace('\\', '\\\\').replace('"', '\\"').replace('$', '\\$').replace(';', '\\;') + '"'


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--source-root', required=True)
    ap.add_argument('--binary-dir', required=True)
    ap.add_argument('--output', required=True, help='CMake file to write')
    ap.add_argument('--runner', required=True)
    ap.add_argument('--bash', default='/bin/bash')
    ap.add_argument('--testparse-dir', required=True)
    ap.add_argument('--petscconf', default='')
    ap.add_argument('--features', default='', help=';- or space-separated names that requires: may use')
    ap.add_argument('--timeout', type=int, default=300)
    ap.add_argument('--mpiexec', default='mpiexec')
    ap.add_argument('--petscdiff', required=True)
    ap.add_argument('files', nargs='*', help='source files (absolute, or relative to --source-root)')
    a = ap.parse_args()

    testparse = load_testparse(a.testparse_dir)
    conf = read_petscconf(a.petscconf)
    features = {f.strip().lower() for f in re.split(r'[;\s]+', a.features) if f.strip()}

    out = []
    out.append('# Generated by config/petnn_testgen.py -- do not edit\n')
    seen = {}
    ntests = 0
    defdir = os.path.join(a.binary_dir, 'testdefs')

    for f in sorted(a.files):
        src = os.path.abspath(os.path.join(a.source_root, f))
        srcdir = os.path.dirname(src)
        reldir = os.path.relpath(srcdir, a.source_root)
        base = os.path.basename(src)
        exe = base.split('.')[0]
        pexe = re.sub('new_', '', exe)
        cwd = os.getcwd()
        try:
            parsed = testparse.parseTestFile(src, 0)[base]
            error = None
        except Exception as e:  # noqa: BLE001 -- report any parser failure as a failing test
            parsed, error = {}, '%s: %s: %s' % (src, type(e).__name__, e)
        finally:
            os.chdir(cwd)
        if error:
            sys.stderr.write('petnn_testgen: cannot parse TEST block: %s\n' % error)
            tname = '%s/%s_PARSE_ERROR' % (reldir, exe)
            out.append('add_test(NAME %s COMMAND %s -c %s)\n' % (
                cmake_quote(tname), a.bash, cmake_quote('echo %s >&2 && exit 1' % q(error))))
            continue

        file_skip = []
        if parsed.get('TODO'):
            file_skip.append('TODO: ' + parsed['TODO'])
        if parsed.get('SKIP'):
            file_skip.append('SKIP: ' + str(parsed['SKIP']))
        if parsed.get('depends'):
            sys.stderr.write('petnn_testgen: %s: build depends: is not supported (ignored)\n' % src)

        for key in sorted(parsed):
            if not key.startswith('run'):
                continue  # build keys merged in by parseTestFile
            entry = parsed[key]
            rest = key[len('run' + pexe):] if key.startswith('run' + pexe) else key[3:]
            name = exe + (rest if rest else '_1')
            tname = '%s/%s' % (reldir, name)
            if tname in seen:
                out.append('add_test(NAME %s COMMAND %s -c %s)\n' % (
                    cmake_quote(tname + '_DUPLICATE'), a.bash,
                    cmake_quote('echo duplicate test name %s from %s and %s >&2 && exit 1'
                                % (tname, seen[tname], src))))
                continue
            seen[tname] = src
            try:
                runs, variants = make_runs(entry)
            except ValueError as e:
                out.append('add_test(NAME %s COMMAND %s -c %s)\n' % (
                    cmake_quote(tname), a.bash, cmake_quote('echo %s >&2 && exit 1' % q('%s: %s' % (src, e)))))
                continue

            skip = list(file_skip)
            reqs = ' '.join(v.get('requires', '') for v in variants)
            skip += requirements_failures(reqs, conf, features)
            for v in variants:
                if v.get('TODO'):
                    skip.append('TODO: ' + v['TODO'])
                if v.get('SKIP'):
                    skip.append('SKIP: ' + str(v['SKIP']))
            need_datafiles = any(r == 'datafilespath' for r in reqs.split())
            has_suffix = bool(rest) and rest != '_1'
            factor = max(float(v.get('timeoutfactor', '1') or 1) for v in variants)
            timeout = max(1, int(a.timeout * factor))
            maxnp = max(r['nsize'] for r in runs)

            desc = os.path.join(defdir, reldir, name + '.sh')
            os.makedirs(os.path.dirname(desc), exist_ok=True)
            with open(desc, 'w') as fh:
                fh.write('# Generated by config/petnn_testgen.py from %s -- do not edit\n' % src)
                fh.write('T_NAME=%s\n' % q(tname))
                fh.write('T_SOURCE=%s\n' % q(src))
                fh.write('T_SRCDIR=%s\n' % q(srcdir))
                fh.write('T_ROOT=%s\n' % q(os.path.abspath(a.source_root)))
                fh.write('T_BINDIR=%s\n' % q(os.path.abspath(a.binary_dir)))
                fh.write('T_RELDIR=%s\n' % q(reldir))
                fh.write('T_MIRROR=%s\n' % q(os.path.join(os.path.abspath(a.binary_dir), 'testrun', reldir, name)))
                fh.write('T_SKIP=%s\n' % q('; '.join(skip)))
                fh.write('T_NEED_DATAFILESPATH=%d\n' % (1 if need_datafiles else 0))
                fh.write('T_MPIEXEC=%s\n' % q(a.mpiexec))
                fh.write('T_PETSCDIFF=%s\n' % q(a.petscdiff))
                fh.write('T_TIMEOUT=%d\n' % timeout)
                fh.write('T_INDEX_BITS=%d\n' % (64 if 'PETSC_USE_64BIT_INDICES' in conf else 32))
                fh.write(bash_array('T_OUTPUTS_DEFAULT', output_candidates(srcdir, name, exe, has_suffix, '')))
                fh.write('T_NRUNS=%d\n' % len(runs))
                for i, r in enumerate(runs):
                    fh.write('T_NSIZE[%d]=%d\n' % (i, r['nsize']))
                    fh.write('T_ARGS[%d]=%s\n' % (i, q(r['args'])))
                    fh.write('T_FILTER[%d]=%s\n' % (i, q(r['filter'])))
                    fh.write('T_FILTER_OUTPUT[%d]=%s\n' % (i, q(r['filter_output'])))
                    fh.write('T_DIFF_ARGS[%d]=%s\n' % (i, q(r['diff_args'])))
                    fh.write('T_ENV[%d]=%s\n' % (i, q(r['env'])))
                    fh.write('T_COMMAND[%d]=%s\n' % (i, q(r['command'])))
                    fh.write('T_ERROR[%d]=%d\n' % (i, r['error']))
                    fh.write('T_LOCALRUNFILES[%d]=%s\n' % (i, q(r['localrunfiles'])))
                    if r['output_file']:
                        fh.write('T_OUTPUTS_%d=(%s)\n' % (i, ' '.join(
                            q(c) for c in output_candidates(srcdir, name, exe, True, r['output_file']))))
                    else:
                        fh.write('T_OUTPUTS_%d=("${T_OUTPUTS_DEFAULT[@]}")\n' % i)

            uses_exe = any(not r['command'] for r in runs)
            labels = [reldir.replace('/', '_')]
            if maxnp > 1:
                labels.append('mpi')
            for req in reqs.split():
                if not req.startswith('!') and req.lower() in features:
                    labels.append(req.lower())
            labels = sorted(set(labels))
            props = ['TIMEOUT %d' % timeout, 'SKIP_RETURN_CODE 77', 'PROCESSORS %d' % maxnp,
                     'LABELS %s' % cmake_quote(';'.join(labels))]
            if maxnp > 1:
                props.append('RUN_SERIAL TRUE')
            out.append('if(TARGET %s)\n' % exe)
            out.append('  add_test(NAME %s COMMAND %s %s %s $<TARGET_FILE:%s>)\n' % (
                cmake_quote(tname), a.bash, cmake_quote(a.runner), cmake_quote(desc), exe))
            out.append('else()\n')
            out.append('  add_test(NAME %s COMMAND %s %s %s %s)\n' % (
                cmake_quote(tname), a.bash, cmake_quote(a.runner), cmake_quote(desc),
                '""' if uses_exe else cmake_quote('(no executable)')))
            out.append('endif()\n')
            out.append('set_tests_properties(%s PROPERTIES %s)\n' % (cmake_quote(tname), ' '.join(props)))
            out.append('list(APPEND PETNN_TEST_EXECUTABLES %s)\n' % exe)
            ntests += 1

    tmp = a.output + '.tmp'
    with open(tmp, 'w') as fh:
        fh.write(''.join(out))
    os.replace(tmp, a.output)
    print('petnn_testgen: %d test cases from %d files' % (ntests, len(a.files)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
