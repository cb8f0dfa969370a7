// A fast path for reading YAML into yaml-cpp nodes. yaml-cpp's scanner is the cost of loading a
// large file (a dump of 100,000 pods spends most of its time in it), so clean texts are parsed
// with libyaml's event parser instead, into the same yaml-cpp node tree yaml-cpp's own loader
// builds (types, scalars, tags, styles and marks alike), with YamlNode's structure checks
// (models/yaml_reader.hpp: repeated keys, nesting) made in the same pass.
//
// The fast path only takes what it reproduces exactly. It declines (returns nullopt) on anything
// else: a text libyaml refuses, an anchor, alias, tag or directive, a carriage return or byte
// order mark, a key that is not a plain string, a merge key ('<<'), a repeated key, nesting
// deeper than kYamlMaxDepth, or a second document where one is wanted. The caller then takes
// yaml-cpp's path, which gives its located error or its tree; so a text reads exactly as it did
// through yaml-cpp alone, only faster when it is clean.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace capsim {

// The documents of `text` as YAML::LoadAll gives them (a document with no content is a null
// node; a text of only comments has none), or nullopt when the fast path declines. With
// `single`, more than one document declines. `enclosing` counts the collections the text sits in
// within its file (a list item cut out of a file), which count towards kYamlMaxDepth.
std::optional<std::vector<YAML::Node>> fast_load_all(std::string_view text, bool single,
                                                     std::size_t enclosing = 0);

// Receives the documents of a text as the fast path reads them: start() when one begins (at a
// byte offset of the text), end() when it is complete (a null node when it has no content).
class DocumentSink {
 public:
  virtual void start(std::size_t at) = 0;
  virtual void end(YAML::Node doc) = 0;

 protected:
  ~DocumentSink() = default;
};

// fast_load_all's documents handed to `sink` one at a time, all with one libyaml parser, so a
// text of many small documents is not charged a parser's set-up for each. False when the fast
// path declines; the documents handed over before stand (the caller decides what to keep).
// `enclosing` as for fast_load_all, for each document.
bool fast_stream(std::string_view text, DocumentSink& sink, std::size_t enclosing = 0);

// True when `text` passes the structure checks on the fast path; false when it declines (the
// caller then runs yaml-cpp's check, which names the error, if any).
bool fast_check(std::string_view text, bool single);

}  // namespace capsim
