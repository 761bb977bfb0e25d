#include "daemon/control_protocol.h"

#include <nlohmann/json.hpp>

namespace sluice::control {
namespace {

using nlohmann::json;

constexpr Command kCommands[] = {Command::reload,       Command::status,        Command::inspect_stop,
                                 Command::inspect_start, Command::ha_status,     Command::ha_failover,
                                 Command::egress_add,    Command::egress_delete, Command::egress_replace,
                                 Command::metrics};

// A field the schema requires, of the type it requires; an Error naming it otherwise.
template <typename T>
Result<T> field(const json& j, const char* name) {
    if (!j.contains(name)) return make_error(std::string("control message without \"") + name + "\"");
    try {
        return j.at(name).get<T>();
    } catch (const json::exception&) {
        return make_error(std::string("control message: \"") + name + "\" has the wrong type");
    }
}

Result<json> parse_object(std::string_view line) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("control message is not a JSON object");
    return j;
}

}  // namespace

const char* command_name(Command command) {
    switch (command) {
    case Command::reload: return "reload";
    case Command::status: return "status";
    case Command::inspect_stop: return "inspect-stop";
    case Command::inspect_start: return "inspect-start";
    case Command::ha_status: return "ha-status";
    case Command::ha_failover: return "ha-failover";
    case Command::egress_add: return "egress-add";
    case Command::egress_delete: return "egress-delete";
    case Command::egress_replace: return "egress-replace";
    case Command::metrics: return "metrics";
    }
    return "?";
}

std::string encode(const Request& request) {
    return json{{"version", request.version}, {"command", command_name(request.command)}, {"argument", request.argument}}
               .dump() +
           "\n";
}

std::string encode(const Reply& reply) {
    json problems = json::array();
    for (const Problem& p : reply.problems)
        problems.push_back({{"file", p.file}, {"line", p.line}, {"column", p.column}, {"path", p.path},
                            {"message", p.message}, {"text", p.text}});
    return json{{"version", reply.version},
                {"ok", reply.ok},
                {"message", reply.message},
                {"problems", problems},
                {"config_generation", reply.config_generation},
                {"state", reply.state}}
               .dump() +
           "\n";
}

Result<Request> decode_request(std::string_view line) {
    auto j = parse_object(line);
    if (!j) return j.error();
    auto version = field<int>(*j, "version");
    if (!version) return version.error();
    auto name = field<std::string>(*j, "command");
    if (!name) return name.error();
    // "argument" arrived with the HA commands; a request without one has none.
    std::string argument;
    if (j->contains("argument")) {
        auto a = field<std::string>(*j, "argument");
        if (!a) return a.error();
        argument = *a;
    }
    for (Command c : kCommands)
        if (*name == command_name(c)) return Request{*version, c, argument};
    return make_error("unknown control command \"" + *name + "\"");
}

Result<Reply> decode_reply(std::string_view line) {
    auto j = parse_object(line);
    if (!j) return j.error();
    Reply reply;
    auto version = field<int>(*j, "version");
    if (!version) return version.error();
    reply.version = *version;
    auto ok = field<bool>(*j, "ok");
    if (!ok) return ok.error();
    reply.ok = *ok;
    auto message = field<std::string>(*j, "message");
    if (!message) return message.error();
    reply.message = *message;
    auto generation = field<uint64_t>(*j, "config_generation");
    if (!generation) return generation.error();
    reply.config_generation = *generation;
    auto state = field<std::string>(*j, "state");
    if (!state) return state.error();
    reply.state = *state;
    auto problems = field<json>(*j, "problems");
    if (!problems) return problems.error();
    if (!problems->is_array()) return make_error("control message: \"problems\" is not an array");
    for (const json& p : *problems) {
        Problem problem;
        auto file = field<std::string>(p, "file");
        auto line_no = field<int>(p, "line");
        auto column = field<int>(p, "column");
        auto path = field<std::string>(p, "path");
        auto text = field<std::string>(p, "message");
        auto formatted = field<std::string>(p, "text");
        for (const Error* e : {file ? nullptr : &file.error(), line_no ? nullptr : &line_no.error(),
                               column ? nullptr : &column.error(), path ? nullptr : &path.error(),
                               text ? nullptr : &text.error(), formatted ? nullptr : &formatted.error()})
            if (e) return *e;
        reply.problems.push_back({*file, *line_no, *column, *path, *text, *formatted});
    }
    return reply;
}

std::string socket_path(const std::string& state_dir) { return state_dir + "/control.sock"; }

}  // namespace sluice::control
