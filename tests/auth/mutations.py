#!/usr/bin/env python3
"""The mutation check of the DPoP refusals: each check the resource server
makes of a proof is taken out in turn, and the test that covers it must
then fail. A check whose removal no test notices is a check nobody tests.

    python3 tests/auth/mutations.py           # the unit tests (a few minutes)
    python3 tests/auth/mutations.py --e2e     # and the tests against oidc-provider

Works on a copy of the workspace (the checkout is never touched), with a
target directory of its own that survives between runs (MUTATION_TARGET,
default /tmp/mcp-mutations-target). Exits non-zero when a mutant survives,
when a snippet to mutate is no longer in the source (the code moved: update
MUTANTS), or when a mutant does not compile.
"""

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DPOP = "mcp-runtime/src/auth/dpop.rs"
GATE = "mcp-runtime/src/auth/gate.rs"

# (name, file, snippet, its mutant, unit test filter, e2e test filter)
MUTANTS = [
    ("replay", DPOP, "Ok(false) => Err(bad(", "Ok(false) => Ok(()), Ok(false) if false => Err(bad(",
     "auth::dpop::tests::a_replayed_proof_is_refused",
     "dpop::a_proof_replayed_on_another_instance_is_refused"),
    ("url", DPOP, "if !self.names_this_endpoint(", "if false && !self.names_this_endpoint(",
     "auth::dpop::tests::a_proof_for_another_url_is_refused",
     "dpop::a_bound_token_needs_a_fresh_proof_for_this_request"),
    ("method", DPOP, "if claims.htm != presented.method", "if false && claims.htm != presented.method",
     "auth::dpop::tests::a_proof_for_another_method_is_refused",
     "dpop::a_bound_token_needs_a_fresh_proof_for_this_request"),
    ("stale", DPOP, "if now - issued > self.settings.max_age", "if false && now - issued > self.settings.max_age",
     "auth::dpop::tests::a_stale_proof_is_refused",
     "dpop::an_introspected_bound_token_needs_its_proof_too"),
    ("future", DPOP, "if issued > now + FUTURE_SKEW {", "if false && issued > now + FUTURE_SKEW {",
     "auth::dpop::tests::a_proof_from_the_future_is_refused", None),
    ("ath", DPOP, "if claims.ath.as_deref() != Some(", "if false && claims.ath.as_deref() != Some(",
     "auth::dpop::tests::a_proof_for_another_token_is_refused",
     "dpop::a_bound_token_needs_a_fresh_proof_for_this_request"),
    ("bound key", DPOP, "if thumbprint != jkt {", "if false && thumbprint != jkt {",
     "auth::dpop::tests::a_proof_by_another_key_than_the_bound_one_is_refused", None),
    ("signature", DPOP, "jsonwebtoken::decode::<ProofClaims>(proof, &key, &validation)",
     "jsonwebtoken::dangerous::insecure_decode::<ProofClaims>(proof)",
     "auth::dpop::tests::a_proof_whose_signature_does_not_verify_is_refused", None),
    ("typ", DPOP, 'if header.typ.as_deref() != Some("dpop+jwt")', 'if false && header.typ.as_deref() != Some("dpop+jwt")',
     "auth::dpop::tests::a_proof_of_another_type_or_algorithm_is_refused", None),
    ("algorithm", DPOP, "if !self.algorithms.contains(&header.alg)", "if false && !self.algorithms.contains(&header.alg)",
     "auth::dpop::tests::a_proof_of_another_type_or_algorithm_is_refused", None),
    ("private key", DPOP, "if has_private_key(proof) {", "if false && has_private_key(proof) {",
     "auth::dpop::tests::a_proof_carrying_a_private_key_is_refused", None),
    ("one proof", DPOP, "let (Some(value), None) = (values.next(), values.next())",
     "let (Some(value), _) = (values.next(), values.next())",
     "auth::dpop::tests::exactly_one_proof_is_needed", None),
    ("nonce", DPOP, "let Some(lifetime) = self.settings.nonce_lifetime else",
     "let Some(lifetime) = self.settings.nonce_lifetime.filter(|_| false) else",
     "auth::dpop::tests::the_server_nonce_is_demanded_when_configured",
     "dpop::the_server_nonce_flow"),
    ("nonce expiry", DPOP, "Some(Some(age)) if age > lifetime.as_secs()", "Some(Some(age)) if false && age > lifetime.as_secs()",
     "auth::dpop::tests::the_server_nonce_is_demanded_when_configured", None),
    ("bearer", GATE, "(Scheme::Bearer, _) => {", "(Scheme::Bearer, _) => return Ok(None), (Scheme::Bearer, Binding::Unknown) => {",
     "auth::gate::tests::a_token_bound_to_a_dpop_key_is_not_taken_as_a_bearer_token",
     "dpop::a_bound_token_needs_a_fresh_proof_for_this_request"),
]


def cargo(args, cwd, target, capture=True):
    # Incremental builds: each mutant changes one line of one crate.
    env = dict(os.environ, CARGO_TARGET_DIR=target, CARGO_INCREMENTAL="1",
               CARGO_PROFILE_DEV_DEBUG="line-tables-only")
    return subprocess.run(["cargo", *args], cwd=cwd, env=env, text=True,
                          capture_output=capture, check=False)


def unit(filter_):
    return ["test", "-p", "mcp-runtime", "--features", "auth", "--lib", "--", "--exact", filter_]


def e2e(filter_):
    return ["test", "-p", "secure-notes", "--features", "oidc-tests", "--test", "oidc", "--", filter_]


def main():
    with_e2e = "--e2e" in sys.argv
    target = os.environ.get("MUTATION_TARGET", "/tmp/mcp-mutations-target")
    copy = tempfile.mkdtemp(prefix="mcp-mutations-")
    ignore = shutil.ignore_patterns("target", "node_modules", "results", ".git")
    shutil.copytree(ROOT, copy, dirs_exist_ok=True, ignore=ignore)
    if with_e2e:
        os.symlink(os.path.join(ROOT, "tests/auth/node_modules"),
                   os.path.join(copy, "tests/auth/node_modules"))
    survivors, broken = [], []
    try:
        # Unmutated, every test passes: a failure later is the mutant's.
        for name, _, _, _, test, end_to_end in MUTANTS:
            if cargo(unit(test), copy, target).returncode != 0:
                broken.append(f"{name}: {test} fails without a mutation")
        if broken:
            raise SystemExit("\n".join(broken))
        for name, path, snippet, mutant, test, end_to_end in MUTANTS:
            file = os.path.join(copy, path)
            source = open(file, encoding="utf-8").read()
            if source.count(snippet) != 1:
                broken.append(f"{name}: `{snippet}` is not in {path} exactly once")
                continue
            with open(file, "w", encoding="utf-8") as out:
                out.write(source.replace(snippet, mutant))
            try:
                runs = [unit(test)] + ([e2e(end_to_end)] if with_e2e and end_to_end else [])
                for args in runs:
                    built = cargo([*args[:args.index("--")], "--no-run"], copy, target)
                    if built.returncode != 0:
                        broken.append(f"{name}: the mutant does not compile\n{built.stderr[-2000:]}")
                        break
                    verdict = cargo(args, copy, target).returncode
                    caught = "caught" if verdict != 0 else "SURVIVED"
                    print(f"{name:14} {caught:9} by {args[-1]}", flush=True)
                    if verdict == 0:
                        survivors.append(f"{name} ({args[-1]})")
            finally:
                with open(file, "w", encoding="utf-8") as out:
                    out.write(source)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    for problem in broken:
        print(f"error: {problem}", file=sys.stderr)
    for survivor in survivors:
        print(f"error: no test noticed the removal of the {survivor} check", file=sys.stderr)
    if broken or survivors:
        return 1
    print(f"every mutant caught ({len(MUTANTS)} checks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
