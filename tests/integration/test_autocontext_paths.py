"""Path words: those shared by many paths only add to other reasons, and a word's ending does
not hide the file it names. Real files in real git repositories."""

from __future__ import annotations

from pathlib import Path

from support.context import found, make_repo


def test_words_in_the_paths_of_many_files_only_add_to_other_reasons(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"packages/runtime-core/src/m{i}.ts": f"export const m{i} = 1\n" for i in range(6)}
    files["packages/runtime-core/src/hydrate.ts"] = "export function hydrateNode() {}\n"
    files["packages/other/src/hydrate.ts"] = "export function hydrateNode() {}\n"
    root = make_repo(tmp_path / "r", files)
    got = found(root, "fix(runtime-core): hydrateNode skips comments")
    assert set(got) == {"packages/runtime-core/src/hydrate.ts", "packages/other/src/hydrate.ts"}
    assert next(iter(got)) == "packages/runtime-core/src/hydrate.ts"  # the scope's words add


def test_a_word_with_an_ending_still_finds_the_file_it_names(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"src/diff.rs": "fn run() {}\n",
                                      "src/main.rs": "fn main() {}\n"})
    assert found(root, "Use histogram instead of myers for diffing") == {
        "src/diff.rs": "path: diff"}
