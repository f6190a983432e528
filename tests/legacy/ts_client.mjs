// A real legacy client: the TypeScript SDK v2 client
// (@modelcontextprotocol/client) in its default mode, which is the plain
// 2025 `initialize` handshake (versionNegotiation 'legacy'). Drives the
// conformance fixture over stdio (--stdio BINARY) or Streamable HTTP
// (--url URL): lists and calls tools, reads a resource, gets a prompt, and
// answers an elicitation the server bridges from an input_required result.
//
// Prints one line per check and `N passed, N failed`; exits 1 on failure.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [flag, target] = process.argv.slice(2);
if (!['--stdio', '--url'].includes(flag) || !target) {
    console.error('usage: ts_client.mjs --stdio BINARY | --url URL');
    process.exit(2);
}
const label = flag === '--stdio' ? 'stdio' : 'http';
const results = [];
const check = (name, ok, detail = '') => results.push({ name, ok: Boolean(ok), detail });

const client = new Client(
    { name: 'legacy-ts-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } }
);
let elicitations = 0;
client.setRequestHandler('elicitation/create', async (request) => {
    elicitations += 1;
    const properties = Object.keys(request.params.requestedSchema.properties).sort();
    check('the elicitation form has the fixture fields', properties.join() === 'email,username', properties);
    return { action: 'accept', content: { username: 'ts-user', email: 'ts@example.com' } };
});

const transport =
    flag === '--stdio'
        ? new StdioClientTransport({ command: target, args: [], stderr: 'ignore' })
        : new StreamableHTTPClientTransport(new URL(target));

try {
    await client.connect(transport);
    const version = client.getNegotiatedProtocolVersion();
    check('initialize negotiates a legacy version', ['2025-11-25', '2025-06-18', '2025-03-26'].includes(version), version);
    check('server advertises tools', client.getServerCapabilities()?.tools, client.getServerCapabilities());
    if (flag === '--url') {
        check('the HTTP session has an id', typeof transport.sessionId === 'string' && transport.sessionId.length > 0, transport.sessionId);
    }

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    check('tools/list has the fixture tools', names.includes('test_simple_text') && names.includes('test_elicitation'), names);

    const text = await client.callTool({ name: 'test_simple_text', arguments: {} });
    check('tools/call returns text', text.content?.[0]?.text === 'This is a simple text response for testing.', JSON.stringify(text));

    const resource = await client.readResource({ uri: 'test://static-text' });
    check('resources/read returns the text', resource.contents?.[0]?.text === 'This is the content of the static text resource.', JSON.stringify(resource));

    const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x', arg2: 'y' } });
    check('prompts/get fills in arguments', JSON.stringify(prompt.messages).includes('x'), JSON.stringify(prompt));

    const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    check('elicitation is bridged to elicitation/create', elicitations === 1 && elicited.content?.[0]?.text?.includes('ts-user'), JSON.stringify(elicited));

    await client.setLoggingLevel('debug');
    await client.ping();
    check('ping and logging/setLevel answer', true);
} catch (error) {
    check('no request failed', false, error?.stack ?? String(error));
} finally {
    if (transport.terminateSession) {
        await transport.terminateSession().catch(() => {});
    }
    await client.close().catch(() => {});
}

let failed = 0;
for (const { name, ok, detail } of results) {
    console.log(`  ${ok ? 'ok  ' : 'FAIL'} ts/${label}: ${name}${ok ? '' : ` -- ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`.slice(0, 400)}`);
    failed += ok ? 0 : 1;
}
console.log(`ts/${label}: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
